/**
 * kill -9 of the apply CLI at 10 seeded points (mid-send, mid-batch, and during start-up and the staleness check),
 * resuming after each: the end state equals a clean run of the same plan on a second sandbox of the same seed, and
 * no mutation reached the service twice. Uses dist/ (`npm test` builds first).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  changeKey,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  posts,
  runApply,
  stateHolds,
  tempDir,
} from "../apply/helpers.js";
import { CLI, spawnCli, type CliRun } from "../helpers/cli.js";
import { prng } from "./helpers.js";

/** seeded and deterministic; FLOWRULES_CRASH_SEED tries other kill points */
const SEED = Number(process.env.FLOWRULES_CRASH_SEED ?? 61);
const KILLS = 10;
const BATCH = 4;

const sandboxes: RunningSandbox[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const s of sandboxes.splice(0)) await s.close();
});

function applyChild(sb: RunningSandbox, dir: string, file: string): CliRun {
  const run = spawnCli(
    ["apply", file, "--batch-size", String(BATCH), "--detailed-exitcode"],
    { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" },
    { cwd: dir },
  );
  children.push(run.child);
  return run;
}

/** Resolves when `until()` holds, or rejects if the child ends first. */
async function whenOrEnd(run: CliRun, until: () => boolean): Promise<void> {
  let ended = false;
  void run.done.then(() => (ended = true));
  for (let i = 0; !until(); i++) {
    if (ended) throw new Error("the apply finished before the kill point");
    if (i > 20_000) throw new Error("the kill point was never reached");
    await new Promise((r) => setTimeout(r, 3));
  }
}

/** What a run of the plan leaves in the store, without times (the two sandboxes started a few ms apart). */
function endState(sb: RunningSandbox): unknown[] {
  return sb.store.list().map((i) => ({
    id: i.id,
    ended: [i.completedTime !== null, i.abortedTime !== null],
    active: i.activeStepIds,
    reached: i.reachedStepIds,
    completedSteps: [...i.stepCompletedTimes.keys()].sort(),
    deadlines: [...i.stepDeadlines.keys()].sort(),
    stage: i.stage,
    // generated date values are relative to each sandbox's start: masked
    values: JSON.stringify([...i.values.entries()].sort(([a], [b]) => a - b)).replace(
      /\d{4}-\d\d-\d\dT[\d:.]+Z/g,
      "<time>",
    ),
    touched: i.lastUpdatedTime !== null,
  }));
}

const shape = (p: Plan): unknown[] => p.changes.map((c) => [c.id, c.kind, c.instance_id, c.step_id, c.request]);

describe("kill -9 at ten seeded points", () => {
  it("resumed after each kill: the end state equals an uninterrupted run, and no mutation is repeated", async () => {
    const crashed = await startSandbox({ port: 0, instances: 400, seed: SEED, latencyMs: 25 });
    const clean = await startSandbox({ port: 0, instances: 400, seed: SEED });
    sandboxes.push(crashed, clean);
    const dirA = await tempDir();
    const dirB = await tempDir();
    const a = await makePlan(crashed, dirA, MIXED_RULES);
    const b = await makePlan(clean, dirB, MIXED_RULES);
    // the same seed plans the same changes on both
    expect(shape(a.plan)).toEqual(shape(b.plan));
    expect(endState(crashed)).toEqual(endState(clean));

    // the uninterrupted run
    expect(await runApply(clean, dirB, { paths: [b.file], batchSize: BATCH })).toBe(2);

    // the interrupted one: kill points in mutations sent so far, increasing; a few during start-up instead
    const aborts = a.plan.changes.filter((c) => c.kind === "abort").length;
    const total = a.plan.changes.length - aborts + Math.ceil(aborts / BATCH);
    expect(total).toBeGreaterThan(3 * KILLS);
    const random = prng(SEED);
    const points = new Set<number>();
    while (points.size < KILLS) points.add(1 + Math.floor(random() * (total - 4)));
    const thresholds = [...points].sort((x, y) => x - y);
    const early = new Set(thresholds.filter(() => random() < 0.3));
    crashed.clearRequests();
    const journalFile = `${a.file}.journal.jsonl`;
    const kills: string[] = [];
    for (const threshold of thresholds) {
      const run = applyChild(crashed, dirA, a.file);
      if (early.has(threshold)) {
        // start-up, journal replay, lock take-over or the staleness check
        const delay = 40 + Math.floor(random() * 400);
        await Promise.race([new Promise((r) => setTimeout(r, delay)), run.done]);
        kills.push(`after ${delay} ms`);
      } else {
        await whenOrEnd(run, () => posts(crashed).length >= threshold);
        kills.push(`at mutation ${threshold}`);
      }
      run.child.kill("SIGKILL");
      const killed = await run.done;
      expect(killed.signal, `${kills.at(-1) ?? ""}: ${killed.stdout}${killed.stderr}`).toBe("SIGKILL");
    }
    // the kills left work undone, a lock behind, and a journal without a finish
    expect(a.plan.changes.some((c) => !stateHolds(crashed, c))).toBe(true);
    expect(existsSync(join(dirA, ".flowrules", "apply.lock"))).toBe(true);
    expect(await readFile(journalFile, "utf8")).not.toContain('"event":"finish"');

    const last = await applyChild(crashed, dirA, a.file).done;
    expect(last.code, last.stdout + last.stderr).toBe(2);
    expect(last.stdout).toMatch(/^Apply complete: /m);
    expect(last.stderr).toMatch(/took over the stale lock/);
    expect(existsSync(join(dirA, ".flowrules", "apply.lock"))).toBe(false);

    // no mutation repeated, every change in place, and the same end state as the clean run
    const counts = effectiveMutations(crashed);
    expect(
      a.plan.changes
        .filter((c) => counts.get(changeKey(c)) !== 1)
        .map((c) => `${c.id} × ${counts.get(changeKey(c)) ?? 0}`),
      kills.join(", "),
    ).toEqual([]);
    expect([...counts.keys()].sort()).toEqual(a.plan.changes.map(changeKey).sort());
    expect(endState(crashed)).toEqual(endState(clean));
  }, 90_000);

  it("a reader that goes away (plan | head, a killed tee) neither crashes the CLI with a stack trace nor stops an apply", async () => {
    const sb = await startSandbox({ port: 0, instances: 600, seed: SEED, latencyMs: 5 });
    sandboxes.push(sb);
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const env = {
      PATH: process.env.PATH,
      FLOWRULES_BASE_URL: sb.baseUrl,
      FLOWRULES_API_KEY: "sandbox-admin",
      FLOWRULES_RATE_LIMIT: "0",
    };

    // plan | head -c 100: stdout closes after the first chunk
    const head = spawn(process.execPath, [CLI, "plan", join(dir, "rules.yaml"), "--format", "json"], {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(head);
    let stderr = "";
    head.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    head.stdout?.once("data", () => head.stdout?.destroy());
    const headCode = await new Promise<number | null>((r) => head.on("close", (code) => r(code)));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    expect(headCode).toBe(0);

    // an apply whose stdout and stderr both go away at once still applies everything, once, and finishes its journal
    sb.clearRequests();
    const apply = spawn(process.execPath, [CLI, "apply", file, "--detailed-exitcode"], {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(apply);
    apply.stdout?.destroy();
    apply.stderr?.destroy();
    const code = await new Promise<number | null>((r) => apply.on("close", (c) => r(c)));
    expect(code).toBe(2);
    const counts = effectiveMutations(sb);
    expect(plan.changes.filter((c) => counts.get(changeKey(c)) !== 1)).toEqual([]);
    expect(await readFile(`${file}.journal.jsonl`, "utf8")).toContain('"event":"finish"');
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
  }, 60_000);
});
