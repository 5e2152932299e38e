/**
 * The lock and the stop signals under unlucky timing (docs/watch.md, "Signals"):
 * a reader racing a holder that releases between its look and its read retries instead of calling the lock
 * foreign; `apply --lock-wait 10m` stopped by SIGTERM while it waits ends at once, naming the wait, not a request in
 * flight; and SIGTERM while `watch` still loads its modules is a clean stop (exit 0), not a kill (143). Real child
 * processes and real signals.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { acquireLock, LockHeldError } from "../../src/fs/lock.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, MIXED_RULES } from "../apply/helpers.js";
import { spawnCli } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { APPROVE_RULES } from "../helpers/rules.js";
import { stderrOf, until } from "../watch/helpers.js";

const WAIT = 30_000;
const LOCK_MODULE = fileURLToPath(new URL("../../dist/fs/lock.js", import.meta.url));
let sb: RunningSandbox;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 120, seed: 42 }));
});

describe("a lock reader racing a holder that releases", () => {
  it("never calls the lock foreign: it retries the vanished file (thousands of looks against a process taking and releasing it)", async () => {
    const dir = await tempDir();
    const file = join(dir, "apply.lock");
    const stopFile = join(dir, "stop");
    // the holder: takes and releases the lock as fast as it can until told to stop
    const holder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { acquireLock } = await import(${JSON.stringify(LOCK_MODULE)});
         const { existsSync } = await import("node:fs");
         let n = 0;
         while (!existsSync(${JSON.stringify(stopFile)})) {
           try { acquireLock(${JSON.stringify(file)}, { applying: "holder", timeoutMs: 60000 }).release(); n++; } catch {}
         }
         process.stdout.write(String(n));`,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    holder.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => holder.on("close", r));
    try {
      await until(() => existsSync(file), WAIT, "the holder's first lock");
      const foreign: string[] = [];
      let held = 0;
      let taken = 0;
      for (let i = 0; i < 4000; i++) {
        try {
          acquireLock(file, { applying: "reader", timeoutMs: 60_000 }).release();
          taken++;
        } catch (err) {
          if (err instanceof LockHeldError) held++;
          else foreign.push((err as Error).message);
        }
      }
      expect(foreign.slice(0, 3)).toEqual([]);
      // both sides really raced
      expect(held).toBeGreaterThan(0);
      expect(taken).toBeGreaterThan(0);
    } finally {
      await writeFile(stopFile, "");
      await exited;
    }
    expect(Number(out)).toBeGreaterThan(0);
  }, 60_000);
});

describe("apply --lock-wait 10m stopped by SIGTERM while it waits", () => {
  it("ends at once, in one line naming the holder and the wait; nothing sent", async () => {
    const dir = await tempDir();
    const { file } = await makePlan(sb, dir, MIXED_RULES);
    // a live apply (this process) holds the lock the child uses
    const lock = acquireLock(join(dir, ".flowrules", "apply.lock"), { applying: "plan.json", timeoutMs: 60_000 });
    try {
      sb.clearRequests();
      const run = spawnCli(
        ["apply", file, "--lock-wait", "10m"],
        { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" },
        { cwd: dir },
      );
      const err = stderrOf(run.child);
      await err.saw(/waiting up to 10m for it to finish/, WAIT);
      run.child.kill("SIGTERM");
      const r = await run.done;
      expect(r.stderr).not.toMatch(/still busy|request in flight/);
      expect(r.stderr).toMatch(
        new RegExp(
          `^flowrules: another apply holds the lock .*apply\\.lock: pid ${process.pid} .*; stopped by SIGTERM while waiting for it to finish \\(--lock-wait\\), nothing was changed$`,
          "m",
        ),
      );
      expect(r.code).toBe(1);
      expect(sb.requests().filter((q) => q.method === "POST")).toEqual([]);
      expect(lock.stillHeld()).toBe(true);
    } finally {
      lock.release();
    }
  }, 60_000);
});

describe("SIGTERM while watch still loads its modules", () => {
  it("is a clean stop: exit 0, the lock never left behind", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "rules.yaml"), APPROVE_RULES);
    // a loader hook that holds the loading of the watch verb's run module for a moment, and says when it begins
    const mark = join(dir, "loading");
    await writeFile(
      join(dir, "hooks.mjs"),
      `import { writeFileSync } from "node:fs";
export async function load(url, context, next) {
  if (url.endsWith("/cli/verbs/watch/run.js")) {
    writeFileSync(${JSON.stringify(mark)}, "");
    await new Promise((r) => setTimeout(r, 1500));
  }
  return next(url, context);
}
`,
    );
    await writeFile(
      join(dir, "register.mjs"),
      `import { register } from "node:module";\nregister(${JSON.stringify(`file://${join(dir, "hooks.mjs")}`)});\n`,
    );
    const run = spawnCli(
      ["watch", "rules.yaml", "--state", "state", "--interval", "1s"],
      {
        FLOWRULES_BASE_URL: sb.baseUrl,
        FLOWRULES_API_KEY: "sandbox-admin",
        FLOWRULES_RATE_LIMIT: "0",
        FLOWRULES_WATCH_MIN_INTERVAL_MS: "200",
        NODE_OPTIONS: `--import ${join(dir, "register.mjs")}`,
      },
      { cwd: dir },
    );
    await until(() => existsSync(mark), WAIT, "the watch verb's module to begin loading");
    run.child.kill("SIGTERM");
    const r = await run.done;
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^flowrules: SIGTERM: stopping/m);
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);
  }, 60_000);
});
