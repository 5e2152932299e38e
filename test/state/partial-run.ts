/**
 * A run of `plan --state --max-duration … --partial` cut after a number of requests, in process against a sandbox
 * (the partial-plan property tests: test/state/partial-property.test.ts, test/state/partial-moved.test.ts).
 */
import { runPlan } from "../../src/engine/plan-live.js";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { HeldMemo, openRunState, type StateSettings } from "../../src/state/index.js";
import { partialPlan } from "../../src/commands/partial-plan.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { cutClient } from "./helpers.js";

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
    const run = await openRunState(settings, {
      baseUrl: c.baseUrl,
      apiKey: "sandbox-admin",
      now,
      rules: ruleSet.rules,
      version: "test",
      warn: () => undefined,
    });
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
