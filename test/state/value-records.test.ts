/**
 * What a run holds of the records it read with values (src/state/records.ts, `VALUE_RECORDS_KEPT`): only what it
 * may ask again at the cost of a request. A record the state answers is read again from the state, so a steady run
 * holds none of them (at a million instances, holding them was most of a steady run's memory:
 * docs/performance.md, "A million instances"), and the plan stays the stateless plan.
 */
import { describe, expect, it } from "vitest";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { StateClient } from "../../src/state/client.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { client, comparable, openTestRun, statefulPlan, statelessPlan, tempDir } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");

const RULES = `version: 1
rules:
  - name: report-claims
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount > 0
    actions: [ { report: { group_by: priority, columns: [id, name, deadline, fields.amount] } } ]
`;

describe("records with values held by a run", () => {
  it("holds none the state answers, and the plan is the stateless plan", async () => {
    const rules = await rulesFromYaml(RULES);
    const sb = await startSandbox({ port: 0, instances: 300, seed: 5, now: START });
    const dir = await tempDir();
    try {
      const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 3_600_000, fullRefresh: false };
      await statefulPlan(sb, rules, sb.store.now(), settings);
      sb.advanceClock(60_000);
      const now = sb.store.now();
      const run = await openTestRun(settings, sb.baseUrl, now, rules.rules);
      try {
        const wrapped = run.wrap(client(sb));
        const plan = await runPlan({ client: wrapped, ruleSet: rules, now, optOutTag: "no-automation" });
        const counts = run.counts();
        // the run did answer records from the state (else this test proves nothing)...
        expect(counts?.fromState ?? 0).toBeGreaterThan(10);
        // ...and holds none of them
        expect((wrapped as StateClient).valueRecords.size).toBe(0);
        expect(comparable(plan)).toEqual(comparable((await statelessPlan(sb, rules, now)).plan));
      } finally {
        await run.release();
      }
    } finally {
      await sb.close();
      await dir.remove();
    }
  }, 60_000);
});
