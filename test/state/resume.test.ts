/**
 * A first sync cut at any point and resumed (docs/operating.md, "A first sync over several runs"): runs stopped at
 * random requests — as by kill -9 or a crash (no goodbye: the file cut at a random byte after its last checkpoint),
 * by SIGTERM or by --max-duration (a checkpoint of what was read) — with people's work and clock moves between them,
 * then a run that finishes: its plan equals a stateless plan at the same moment, and so does the steady run after it.
 * Many seeds, against the sandbox over loopback HTTP.
 */
import { open, stat } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { Prng } from "../../src/sandbox/prng.js";
import { STATE_FILE, type StateSettings } from "../../src/state/index.js";
import type { RuleSet } from "../../src/rules/types.js";
import { fixtureRules } from "../helpers/rules.js";
import { comparable, cutClient, openTestRun, statefulPlan, statelessPlan, tempDir } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const rules = fixtureRules("state-equality");

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Cut = "kill" | "sigterm" | "max-duration";

/**
 * A run with state stopped once `after` requests were sent: no request starts after (the client's stop, as the CLI's
 * signal and deadline do). "kill" leaves without a checkpoint and cuts the file at a random byte past its last one;
 * the other two write one, as `plan` does when stopped. Returns whether the run was cut before it finished.
 */
async function cutRun(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  now: Date,
  settings: StateSettings,
  cut: Cut,
  after: number,
  random: () => number,
): Promise<{ cut: boolean; requests: number }> {
  const { client: c, stop } = cutClient(sb, after);
  try {
    const run = await openTestRun(settings, c.baseUrl, now, ruleSet.rules);
    let finished = false;
    try {
      const plan = await runPlan({ client: run.wrap(c), ruleSet, now, optOutTag: "no-automation" });
      finished = !stop.signal.aborted || plan.errors.length === 0;
      if (finished) await run.commit();
      else if (cut !== "kill") await run.checkpoint();
    } finally {
      await run.release();
    }
    if (!finished && cut === "kill") await cutAfterLastCheckpoint(join(settings.dir, STATE_FILE), random);
    return { cut: !finished, requests: c.stats().total };
  } finally {
    await c.close();
  }
}

/** A kill -9 while writing: the file ends anywhere after its last checkpoint (a line half-written, or whole lines). */
async function cutAfterLastCheckpoint(file: string, random: () => number): Promise<void> {
  const size = await stat(file).then(
    (s) => s.size,
    () => -1,
  );
  if (size < 0) return;
  const fh = await open(file, "r+");
  try {
    const buf = Buffer.alloc(size);
    await fh.read(buf, 0, size, 0);
    const mark = buf.lastIndexOf('{"checkpoint":');
    if (mark < 0) return;
    const lineEnd = buf.indexOf(10, mark) + 1;
    if (lineEnd <= 0 || lineEnd >= size) return;
    await fh.truncate(lineEnd + Math.floor(random() * (size - lineEnd)));
  } finally {
    await fh.close();
  }
}

describe("a first sync cut and resumed plans what a stateless run plans", () => {
  it("after cuts at random requests (kill, SIGTERM, --max-duration), people's work and clock moves between runs (many seeds)", async () => {
    let cuts = 0;
    let resumedRequests = 0;
    let uninterrupted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(
          fc.record({
            cut: fc.constantFrom<Cut>("kill", "sigterm", "max-duration"),
            // where the cut falls: a share of a whole sync's requests, anywhere from its first to its last
            share: fc.double({ min: 0, max: 1, noNaN: true }),
            changes: fc.integer({ min: 0, max: 8 }),
            minutes: fc.integer({ min: 0, max: 20 }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        fc.integer({ min: 3, max: 60 }),
        async (seed, runs, everyRecords) => {
          const sb = await startSandbox({ port: 0, instances: 300, seed, now: START });
          const dir = await tempDir();
          const random = Prng.fn(seed);
          try {
            const settings: StateSettings = {
              dir: dir.dir,
              resyncAfterMs: 30 * 24 * 3_600_000,
              fullRefresh: false,
              checkpoints: { everyRecords, everyMs: 3_600_000 },
            };
            let total = 0;
            const whole = (await statelessPlan(sb, rules, sb.store.now())).requests;
            for (const [n, r] of runs.entries()) {
              const after = Math.max(1, Math.round(r.share * whole));
              const got = await cutRun(sb, rules, sb.store.now(), settings, r.cut, after, random);
              total += got.requests;
              if (got.cut) cuts++;
              sb.simulate({ seed: seed + n, changes: r.changes });
              sb.advanceClock(r.minutes * 60_000);
            }
            const now = sb.store.now();
            const stateless = await statelessPlan(sb, rules, now);
            const resumed = await statefulPlan(sb, rules, now, settings);
            expect(comparable(resumed.plan)).toEqual(comparable(stateless.plan));
            resumedRequests += total + resumed.requests;
            uninterrupted += stateless.requests;
            // and the state it leaves is whole: the next run costs what changed and still plans the same
            sb.simulate({ seed: seed + 99, changes: 3 });
            sb.advanceClock(60_000);
            const later = sb.store.now();
            const steady = await statefulPlan(sb, rules, later, settings);
            expect(comparable(steady.plan)).toEqual(comparable((await statelessPlan(sb, rules, later)).plan));
            expect(steady.requests).toBeLessThan(stateless.requests);
          } finally {
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 12, seed: 4646 },
    );
    // the property ran on cut runs, not only on runs that finished before their cut
    expect(cuts).toBeGreaterThan(10);
    // resuming re-reads little: far less than reading everything again at each run
    expect(resumedRequests).toBeLessThan(2 * uninterrupted);
  }, 240_000);

  it("a partial state says how far the sync got, outlives --resync-after, and the run that continues it uses what it holds", async () => {
    const sb = await startSandbox({ port: 0, instances: 300, seed: 7, now: START });
    const dir = await tempDir();
    cleanups.push(async () => {
      await sb.close();
      await dir.remove();
    });
    const settings: StateSettings = {
      dir: dir.dir,
      resyncAfterMs: 3_600_000,
      fullRefresh: false,
      checkpoints: { everyRecords: 10, everyMs: 3_600_000 },
    };
    const got = await cutRun(sb, rules, sb.store.now(), settings, "sigterm", 60, () => 0.5);
    expect(got.cut).toBe(true);
    const c = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    cleanups.push(() => c.close());
    // the resync-after of an hour does not throw away a partial sync two hours old
    sb.advanceClock(2 * 3_600_000);
    const run = await openTestRun(settings, c.baseUrl, sb.store.now(), rules.rules);
    try {
      expect(run.partial).toBeDefined();
      expect(run.partial?.synced).toBeGreaterThan(0);
      expect(run.partial?.total).toBeGreaterThanOrEqual(run.partial?.synced ?? 0);
      sb.clearRequests();
      const plan = await runPlan({
        client: run.wrap(c),
        ruleSet: rules,
        now: sb.store.now(),
        optOutTag: "no-automation",
      });
      const counts = run.counts();
      expect(counts?.fromState).toBeGreaterThan(0);
      expect(comparable(plan)).toEqual(comparable((await statelessPlan(sb, rules, sb.store.now())).plan));
    } finally {
      await run.release();
    }
  });
});
