/**
 * The CLI as a child process, stopped mid-apply — by SIGKILL (nothing runs: the journal and the request log are all
 * that is left) and by SIGTERM (graceful) — then run again: every change ends applied exactly once.
 * Uses dist/: `npm test` builds first; this file builds when dist/ lacks the apply command.
 */
import { execSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { changeKey, effectiveMutations, makePlan, MIXED_RULES, posts, stateHolds, tempDir } from "./helpers.js";
import { spawnCli, type CliRun } from "../helpers/cli.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let sb: RunningSandbox | undefined;
const children: ChildProcess[] = [];

beforeAll(() => {
  if (!existsSync(join(ROOT, "dist", "commands", "apply.js")))
    execSync("npm run build", { cwd: ROOT, stdio: "ignore" });
}, 120_000);

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await sb?.close();
  sb = undefined;
});

function applyChild(dir: string, args: string[]): CliRun {
  const run = spawnCli(
    ["apply", ...args],
    { FLOWRULES_BASE_URL: sb?.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" },
    { cwd: dir },
  );
  children.push(run.child);
  return run;
}

/** Polls the sandbox until `n` mutations have arrived (the child is mid-apply). */
async function untilPosts(n: number, run: CliRun): Promise<void> {
  let finished = false;
  void run.done.then(() => (finished = true));
  while (posts(sb as RunningSandbox).length < n) {
    if (finished) throw new Error("the child finished before it could be stopped");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("stopped mid-apply, then resumed", () => {
  it("kill -9 at any point loses nothing and repeats nothing", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 51, latencyMs: 40 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const args = [file, "--batch-size", "5", "--detailed-exitcode"];
    sb.clearRequests();

    const first = applyChild(dir, args);
    // POSTs of a full run: one per step change, one per batch of 5 aborts; kill a third of the way (KILL_AT to vary)
    const aborts = plan.changes.filter((c) => c.kind === "abort").length;
    const total = plan.changes.length - aborts + Math.ceil(aborts / 5);
    await untilPosts(Math.max(1, Math.floor(total * Number(process.env.KILL_AT ?? "0.34"))), first);
    first.child.kill("SIGKILL");
    const killed = await first.done;
    expect(killed.signal).toBe("SIGKILL");
    // the kill left work undone, an open lock and a journal
    expect(plan.changes.some((c) => !stateHolds(sb as RunningSandbox, c))).toBe(true);
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(true);
    const journal = await readFile(`${file}.journal.jsonl`, "utf8");
    expect(journal).toContain('"event":"intent"');
    expect(journal).not.toContain('"event":"finish"');

    const second = await applyChild(dir, args).done;
    expect(second.code, second.stderr + second.stdout).toBe(2);
    expect(second.stderr).toMatch(/took over the stale lock .*its process \d+ is gone/);
    expect(second.stderr).toMatch(/resuming: the journal records 1 earlier run/);
    expect(second.stdout).toMatch(/^Apply complete: /m);

    const counts = effectiveMutations(sb);
    for (const c of plan.changes) {
      expect(counts.get(changeKey(c)), c.id).toBe(1);
      expect(stateHolds(sb, c), c.id).toBe(true);
    }
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
    expect(second.stdout + second.stderr).not.toContain("sandbox-admin");
  });

  it("SIGTERM stops starting requests, journals those in flight, defers the rest (exit 0), releases the lock; a rerun finishes", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 52, latencyMs: 40 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    sb.clearRequests();

    const first = applyChild(dir, [file]);
    await untilPosts(10, first);
    first.child.kill("SIGTERM");
    const stopped = await first.done;
    // a stopped apply is not a failed one: what it did not start is deferred, as at --max-duration
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toMatch(/^flowrules: SIGTERM: stopping — no new request; finishing those in flight/m);
    const head = /^Apply stopped: (\d+) changes? applied, (\d+) deferred \(of (\d+) planned changes\)\.$/m.exec(
      stopped.stdout,
    );
    expect(head, stopped.stdout).not.toBeNull();
    const [applied, deferred, total] = (head ?? []).slice(1).map(Number);
    expect((applied ?? 0) + (deferred ?? 0)).toBe(total);
    expect(deferred).toBeGreaterThan(0);
    expect(stopped.stdout).toMatch(
      /not started before the run was stopped; run the same apply again to resume them from the journal/,
    );
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
    expect(await readFile(`${file}.journal.jsonl`, "utf8")).toContain('"event":"finish"');

    const second = await applyChild(dir, [file]).done;
    expect(second.code, second.stderr).toBe(0);
    const counts = effectiveMutations(sb);
    for (const c of plan.changes) expect(counts.get(changeKey(c)), c.id).toBe(1);
  });
});
