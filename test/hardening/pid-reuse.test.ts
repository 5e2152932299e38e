/**
 * Locks that survive pid reuse (docs/contracts.md, "Deployment"): a lock is ours only with our token.
 * In a container the entrypoint is pid 1, so a watcher killed with kill -9 and restarted finds a lock naming its own
 * pid: that lock is stale and taken over with one line, never refused forever. A live pid that another program took
 * over (it started at another time than the lock's owner) is no owner either. Tested with a real watcher in a new pid
 * namespace (`unshare`, where the kernel allows it), and with locks naming the test's own pid for each lock flowrules
 * takes: the apply lock, the state dir's and the watcher's.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { watchCommand } from "../../src/commands/watch.js";
import { acquireLock, processStart } from "../../src/fs/lock.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { lockStateDir } from "../../src/state/dir.js";
import { captureIO, connection, makePlan, MIXED_RULES, runApply } from "../apply/helpers.js";
import { CLI } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { APPROVE_RULES } from "../helpers/rules.js";
import { stderrOf } from "../watch/helpers.js";

const WAIT = 30_000;
let sb: RunningSandbox;
const children: ChildProcess[] = [];

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 200, seed: 42 }));
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** A lock as another process wrote it: `pid` on this host with a token this process never made. */
async function foreignLock(file: string, pid: number, extra: Record<string, unknown> = {}): Promise<void> {
  await writeFile(
    file,
    `${JSON.stringify({ pid, host: hostname(), started_at: new Date(Date.now() - 60_000).toISOString(), applying: "watch rules/", token: "0123456789abcdef01234567", ...extra }, null, 2)}\n`,
  );
}

/** Whether this kernel lets us make a pid namespace (root, or user namespaces allowed). */
function unshareWorks(): boolean {
  const r = spawnSync("unshare", ["-p", "-f", "--mount-proc", "--kill-child", "sh", "-c", "test $$ = 1"], {
    stdio: "ignore",
    timeout: 10_000,
  });
  return r.status === 0;
}
const CAN_UNSHARE = unshareWorks();
if (!CAN_UNSHARE)
  console.log(
    "pid-reuse: unshare -p -f --mount-proc does not work on this machine; the watcher in a pid namespace is not tried here",
  );

describe("a watcher killed with kill -9 and restarted as its own pid (pid 1 of a new pid namespace)", () => {
  it.runIf(CAN_UNSHARE)(
    "takes the lock over with one line and runs, instead of refusing forever",
    async () => {
      const dir = await tempDir();
      await writeFile(join(dir, "rules.yaml"), APPROVE_RULES);
      const env = {
        PATH: process.env.PATH,
        HOME: dir,
        FLOWRULES_BASE_URL: sb.baseUrl,
        FLOWRULES_API_KEY: "sandbox-admin",
        FLOWRULES_RATE_LIMIT: "0",
        FLOWRULES_WATCH_MIN_INTERVAL_MS: "200",
      };
      // --kill-child: the namespace's pid 1 gets SIGKILL when unshare does, as a container's entrypoint does on a kill
      const start = (): ChildProcess & ReturnType<typeof stderrOf> => {
        const child = spawn(
          "unshare",
          [
            "-p",
            "-f",
            "--mount-proc",
            "--kill-child",
            process.execPath,
            CLI,
            "watch",
            "rules.yaml",
            "--state",
            "state",
            "--apply",
            "--interval",
            "1s",
          ],
          { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] },
        );
        children.push(child);
        return Object.assign(child, stderrOf(child));
      };
      const lockFile = join(dir, "state", "watch", "lock");

      const first = start();
      await first.saw(/cycle 1 \(first, 1 rule\)/, WAIT);
      const held = JSON.parse(await readFile(lockFile, "utf8")) as { pid: number; token: string };
      expect(held.pid).toBe(1);
      first.kill("SIGKILL");
      await new Promise((r) => first.once("close", r));
      // the killed watcher's lock is left behind, naming pid 1
      expect(JSON.parse(await readFile(lockFile, "utf8"))).toMatchObject({ pid: 1, token: held.token });

      const second = start();
      const line = await second.saw(/flowrules: took over the stale lock [^\n]*\n/, WAIT);
      expect(line).toMatch(/pid 1 on .*: it names this process's own pid 1 without a token this process made/);
      await second.saw(/cycle 1 \(\w+, 1 rule\): /, WAIT);
      expect(second.text()).not.toMatch(/another watcher uses the state dir/);
      const now = JSON.parse(await readFile(lockFile, "utf8")) as { pid: number; token: string };
      expect(now.pid).toBe(1);
      expect(now.token).not.toBe(held.token);
      // stopped as a container is (SIGTERM to its pid 1, which is the node process inside): exit 0, the lock released
      const inner = Number(
        (await readFile(`/proc/${second.pid}/task/${second.pid}/children`, "utf8")).trim().split(/\s+/)[0],
      );
      expect(inner).toBeGreaterThan(1);
      process.kill(inner, "SIGTERM");
      const code = await new Promise<number | null>((r) => second.once("close", (c) => r(c)));
      expect(code, second.text()).toBe(0);
      expect(existsSync(lockFile)).toBe(false);
    },
    90_000,
  );
});

describe("a lock naming the test's own pid without a token it made, everywhere a lock is taken", () => {
  it("the apply lock: taken over, said in one line", async () => {
    const dir = await tempDir();
    const { file } = await makePlan(sb, dir, MIXED_RULES);
    await mkdir(join(dir, ".flowrules"), { recursive: true });
    await foreignLock(join(dir, ".flowrules", "apply.lock"), process.pid, { applying: "old-plan.json" });
    const io = captureIO();
    await runApply(sb, dir, { paths: [file] }, io);
    const lines = io
      .err()
      .split("\n")
      .filter((l) => l.includes("took over the stale lock"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`took over the stale lock .flowrules/apply.lock (pid ${process.pid} on ${hostname()}`);
    expect(lines[0]).toContain(`it names this process's own pid ${process.pid} without a token this process made`);
    expect(io.err()).not.toMatch(/another apply holds the lock/);
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
  });

  it("the state dir's lock (also the older form without a token): taken over, said once", async () => {
    for (const token of [{}, { token: undefined }]) {
      const dir = await tempDir();
      await foreignLock(join(dir, "state.lock"), process.pid, token);
      if ("token" in token)
        await writeFile(
          join(dir, "state.lock"),
          JSON.stringify({ pid: process.pid, host: hostname(), since: "2026-01-01T00:00:00.000Z" }),
        );
      const lock = lockStateDir(dir, "S", "a run with --state");
      try {
        expect(lock.tookOver?.why).toMatch(
          new RegExp(`names this process's own pid ${process.pid} without a token this process made`),
        );
        expect(lock.stillHeld()).toBe(true);
      } finally {
        lock.release();
      }
    }
  });

  it("the watcher's lock: the watcher takes it over with one line and runs its cycle", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "rules.yaml"), APPROVE_RULES);
    await mkdir(join(dir, "state", "watch"), { recursive: true });
    await foreignLock(join(dir, "state", "watch", "lock"), process.pid);
    const io = captureIO();
    const code = await watchCommand(
      {
        paths: [join(dir, "rules.yaml")],
        planning: { rules: [], explainRequests: false, fullRefresh: false, state: join(dir, "state") },
        stateDir: join(dir, "state"),
        apply: false,
        budgetPercent: 20,
        metricsHost: "127.0.0.1",
        connection: connection(sb),
        signal: new AbortController().signal,
        cwd: dir,
        intervalMs: 150,
        minIntervalMs: 100,
        maxCycles: 1,
      },
      io,
    );
    expect(code, io.err()).toBe(0);
    const lines = io
      .err()
      .split("\n")
      .filter((l) => l.includes("took over the stale lock"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`names this process's own pid ${process.pid} without a token this process made`),
    );
    expect(existsSync(join(dir, "state", "watch", "lock"))).toBe(false);
  });

  it("a lock this process holds stays held: a second take in the same process is refused, and after the release taken", async () => {
    const file = join(await tempDir(), "apply.lock");
    const mine = acquireLock(file, { applying: "first", timeoutMs: 1000 });
    try {
      expect(() => acquireLock(file, { applying: "second", timeoutMs: 1000 })).toThrow(
        new RegExp(`another apply holds the lock .*pid ${process.pid} on .*applying first`),
      );
      expect(mine.stillHeld()).toBe(true);
    } finally {
      mine.release();
    }
    const next = acquireLock(file, { applying: "second", timeoutMs: 1000 });
    expect(next.tookOver).toBeUndefined();
    next.release();
  });
});

describe("a live pid that another program now has", () => {
  it("is stale when the program started at another time than the lock's owner; held when it is the owner", async () => {
    const dir = await tempDir();
    const file = join(dir, "apply.lock");
    const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
    children.push(sleeper);
    const pid = sleeper.pid ?? -1;
    const start = processStart(pid);
    expect(start).toBeDefined();
    // the lock's owner started at another time: the pid was reused by `sleep`
    await foreignLock(file, pid, { process_start: "1 ticks after boot" });
    const lock = acquireLock(file, { applying: "x", timeoutMs: 1000 });
    expect(lock.tookOver?.why).toBe(
      `its pid ${pid} now belongs to another program (started ${start}, the owner started 1 ticks after boot)`,
    );
    lock.release();
    // the owner itself, alive: respected, however old
    await foreignLock(file, pid, { process_start: start });
    expect(() => acquireLock(file, { applying: "x", timeoutMs: 1000 })).toThrow(
      new RegExp(`another apply holds the lock .*pid ${pid} on`),
    );
    // a lock of an older flowrules names no start: a live pid is respected, as before
    await foreignLock(file, pid);
    expect(() => acquireLock(file, { applying: "x", timeoutMs: 1000 })).toThrow(/another apply holds the lock/);
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ pid });
  });
});
