/**
 * The contract of `--state` (DESIGN.md section 11): after any sequence of people's work (edits, steps completed,
 * aborts, new instances, deadlines set to come due) and clock moves, a run with state plans exactly what a stateless
 * run plans at the same moment: changes, inputs, reports, conflicts, limits, exclusions, errors. Random sequences
 * from many seeds, against the sandbox over loopback HTTP, with a rule set using every kind of selection filter.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type PeopleAction, type RunningSandbox } from "../../src/sandbox/index.js";
import { fixtureRules } from "../helpers/rules.js";
import { comparable, statefulPlan, statelessPlan, tempDir } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const MINUTE = 60_000;
const rules = fixtureRules("state-equality");

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const KINDS: PeopleAction[] = ["edit-value", "edit-tags", "edit-priority", "complete-step", "abort", "start", "deadline-due"];

/** One round between two runs: some people's work, then the clock moves (often a little, sometimes days). */
const round = fc.record({
  changes: fc.integer({ min: 0, max: 25 }),
  kinds: fc.option(fc.subarray(KINDS, { minLength: 1 }), { nil: undefined }),
  minutes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 60, max: 3 * 24 * 60 })),
  // work done after the clock moved too (changes at the very moment of the run)
  late: fc.integer({ min: 0, max: 5 }),
});

describe("a run with state plans what a stateless run plans", () => {
  it("after every step of random people's work and clock moves (many seeds)", async () => {
    let compared = 0;
    let withState = 0;
    let without = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 1_000_000 }), fc.array(round, { minLength: 2, maxLength: 5 }), async (seed, rounds) => {
        const sb: RunningSandbox = await startSandbox({ port: 0, instances: 300, seed, now: START });
        const dir = await tempDir();
        try {
          const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 60 * MINUTE, fullRefresh: false };
          const first = await statefulPlan(sb, rules, sb.store.now(), settings);
          expect(comparable(first.plan)).toEqual(comparable((await statelessPlan(sb, rules, sb.store.now())).plan));
          for (const [n, r] of rounds.entries()) {
            sb.simulate({ seed: seed + n, changes: r.changes, ...(r.kinds ? { kinds: r.kinds } : {}) });
            sb.advanceClock(r.minutes * MINUTE);
            if (r.late > 0) sb.simulate({ seed: seed + 1000 + n, changes: r.late });
            const now = sb.store.now();
            const stateless = await statelessPlan(sb, rules, now);
            const stateful = await statefulPlan(sb, rules, now, settings);
            expect(comparable(stateful.plan), `seed ${seed}, after round ${n + 1} (${JSON.stringify(r)})`).toEqual(comparable(stateless.plan));
            expect(stateful.warnings).toEqual([]);
            compared++;
            withState += stateful.requests;
            without += stateless.requests;
          }
        } finally {
          await sb.close();
          await dir.remove();
        }
      }),
      { numRuns: 12, seed: 24, endOnFailure: true },
    );
    expect(compared).toBeGreaterThanOrEqual(24);
    // the state is used, not just carried: the runs with it asked for much less
    expect(withState).toBeLessThan(without / 2);
  }, 300_000);

  it("with the rule set changed, a structure probe, an expired resync and --full-refresh, still equal (with one warning each)", async () => {
    const sb = await startSandbox({ port: 0, instances: 300, seed: 5, now: START });
    const dir = await tempDir();
    cleanups.push(() => sb.close(), () => dir.remove());
    const settings = { dir: dir.dir, resyncAfterMs: 24 * 60 * MINUTE, fullRefresh: false };
    await statefulPlan(sb, rules, sb.store.now(), settings);

    // a changed rule: its workflow is read in full, once, with one warning naming it
    const edited = fixtureRules("state-equality");
    const target = edited.rules.find((r) => r.name === "overdue-by-tag");
    if (!target) throw new Error("fixture lost its rule");
    target.select = { ...target.select, priority: "H" };
    sb.simulate({ seed: 1, changes: 10 });
    sb.advanceClock(20 * MINUTE);
    let run = await statefulPlan(sb, edited, sb.store.now(), settings);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, edited, sb.store.now())).plan));
    expect(run.warnings).toEqual([expect.stringMatching(/^state: rule overdue-by-tag new or changed since the last run: its workflow is read in full$/)]);

    // two days later: past --resync-after, every workflow is read in full again, one warning
    sb.advanceClock(2 * 24 * 60 * MINUTE);
    run = await statefulPlan(sb, edited, sb.store.now(), settings);
    expect(run.warnings).toHaveLength(1);
    expect(run.warnings[0]).toMatch(/--resync-after/);
    expect(run.counts?.fromState).toBe(0);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, edited, sb.store.now())).plan));

    // --full-refresh: nothing from the state, same plan, no warning
    run = await statefulPlan(sb, edited, sb.store.now(), { ...settings, fullRefresh: true });
    expect(run.counts?.fromState).toBe(0);
    expect(run.warnings).toEqual([]);
    // and the next run uses what it wrote
    sb.advanceClock(5 * MINUTE);
    run = await statefulPlan(sb, edited, sb.store.now(), settings);
    expect(run.counts?.fromState ?? 0).toBeGreaterThan(50);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, edited, sb.store.now())).plan));
  }, 120_000);

  it("a run that fails to read part of the data leaves the previous state as it was; the next run is still right", async () => {
    const sb = await startSandbox({ port: 0, instances: 300, seed: 8, now: START });
    const dir = await tempDir();
    cleanups.push(() => sb.close(), () => dir.remove());
    const settings = { dir: dir.dir, resyncAfterMs: 24 * 60 * MINUTE, fullRefresh: false };
    await statefulPlan(sb, rules, sb.store.now(), settings);
    const file = join(dir.dir, "state.jsonl");
    const before = await readFile(file, "utf8");
    sb.simulate({ seed: 3, changes: 20 });
    sb.advanceClock(10 * MINUTE);
    sb.setFaults({ failRate: 1 });
    const failed = await statefulPlan(sb, rules, sb.store.now(), settings, { maxAttempts: 1, retryBaseMs: 1 });
    sb.setFaults({ failRate: 0 });
    expect(failed.plan.errors.some((e) => e.code === "api" || e.code === "resolve")).toBe(true);
    expect(await readFile(file, "utf8")).toBe(before);
    expect(existsSync(join(dir.dir, "state.lock"))).toBe(false);
    const run = await statefulPlan(sb, rules, sb.store.now(), settings);
    expect(run.counts?.fromState ?? 0).toBeGreaterThan(50);
    expect(comparable(run.plan)).toEqual(comparable((await statelessPlan(sb, rules, sb.store.now())).plan));
  }, 120_000);
});
