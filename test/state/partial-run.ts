/**
 * A run of `plan --state --max-duration … --partial` cut after a number of requests, in process against a sandbox
 * (the partial-plan property tests: test/state/partial-property.test.ts, test/state/partial-moved.test.ts).
 */
import { runPlan } from "../../src/engine/plan-live.js";
import type { PeopleResult, RunningSandbox } from "../../src/sandbox/index.js";
import { HeldMemo, type StateSettings } from "../../src/state/index.js";
import { partialPlan } from "../../src/commands/partial-plan.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { cutClient, openTestRun, statefulPlan, statelessPlan } from "./helpers.js";

/** A run of `plan --state --max-duration … --partial` cut after `after` requests; the partial plan, or none. */
export async function partialRun(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  now: Date,
  settings: StateSettings,
  after: number,
  partial: boolean,
): Promise<{ plan: Plan; cut: string[] } | undefined> {
  const { client: c, stop } = cutClient(sb, after);
  try {
    const run = await openTestRun(settings, c.baseUrl, now, ruleSet.rules);
    try {
      const memo = new HeldMemo(run.wrap(c));
      const plan = await runPlan({ client: memo, ruleSet, now, optOutTag: "no-automation" });
      if (!stop.signal.aborted || plan.errors.length === 0) {
        await run.commit();
        return undefined;
      }
      const synced = await run.checkpoint();
      if (!partial) return undefined;
      const cut = plan.errors.filter((e) => e.code === "api" && e.rule !== undefined).map((e) => e.rule as string);
      const made = await partialPlan({
        plan,
        sync: synced ?? run.partial,
        cut,
        ruleSet,
        state: run,
        memo,
        live: c,
        now,
        run: { optOutTag: "no-automation" },
      });
      return { plan: made, cut };
    } finally {
      await run.release();
    }
  } finally {
    await c.close();
  }
}

/**
 * A steady run cut after people's work: a complete first sync, `changes` instances changed, the clock moved by
 * `minutes`, then a run cut within its first requests (a steady run asks much less than a stateless one: cut within
 * `share` of 30 % of a stateless run's); the partial plan (or none), the run's `now` and who changed.
 */
export async function steadyCutRun(
  sb: RunningSandbox,
  ruleSet: RuleSet,
  settings: StateSettings,
  o: { seed: number; changes: number; minutes: number; share: number },
): Promise<{ made: { plan: Plan; cut: string[] } | undefined; now: Date; people: PeopleResult }> {
  await statefulPlan(sb, ruleSet, sb.store.now(), settings);
  const people = sb.simulate({ seed: o.seed, changes: o.changes });
  sb.advanceClock(o.minutes * 60_000);
  const now = sb.store.now();
  const whole = (await statelessPlan(sb, ruleSet, now)).requests;
  const made = await partialRun(sb, ruleSet, now, settings, 1 + Math.round(o.share * whole * 0.3), true);
  return { made, now, people };
}
