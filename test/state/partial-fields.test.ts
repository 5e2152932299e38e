/**
 * Field values read by form-field pages before a cut answer a partial plan (docs/operating.md, "A partial plan"):
 * the engine asks a field's values by instance ids, 500 a page, and the state writes each page's values as it comes,
 * so the checkpoint at the cut holds every page read. Here a rule reads a field of 1,000 instances (two pages): cut at
 * each request of a first sync, once the first page of values was read it is planned over those 500 instances, each
 * report row (its field value included) one the stateless plan has, and nothing else of it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { Plan } from "../../src/plan/types.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { cleanUp } from "../helpers/temp.js";
import { statelessPlan, tempDir } from "./helpers.js";
import { partialRun } from "./partial-run.js";

const START = new Date("2026-06-15T12:00:00.000Z");

const RULES = `
version: 1
rules:
  - name: open-amounts
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running] }
    actions:
      - report: { group_by: status, columns: [id, fields.amount] }
`;

afterAll(cleanUp);

const rowsOf = (plan: Plan): string[] => plan.reports.flatMap((r) => r.rows.map((row) => JSON.stringify(row))).sort();

describe("field values read by form-field pages before a cut", () => {
  it("answer the partial plan: planned over the instances whose values were read", async () => {
    const rules = await rulesFromYaml(RULES);
    const sb = await startSandbox({ port: 0, instances: 4_000, seed: 5, now: START });
    try {
      const stateless = await statelessPlan(sb, rules, START);
      const all = new Set(rowsOf(stateless.plan));
      const selected = stateless.plan.rules[0]?.selected ?? 0;
      expect(selected).toBeGreaterThan(500);
      let withValues = 0;
      for (let cutAt = 1; cutAt < stateless.requests; cutAt++) {
        const dir = await tempDir();
        try {
          const settings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 3_600_000, fullRefresh: false };
          const made = await partialRun(sb, rules, START, settings, cutAt, true);
          if (!made?.plan.partial) continue;
          const mine = rowsOf(made.plan);
          for (const row of mine) expect(all.has(row), `cut at ${cutAt}: ${row}`).toBe(true);
          const part = made.plan.partial.rules_partial?.find((r) => r.rule === "open-amounts");
          if (part && part.selected > 0) {
            // a whole page of values: the 500 instances of the first listing page, with their values
            expect(part).toEqual({ rule: "open-amounts", selected: 500, total: selected });
            expect(mine.length).toBe(500);
            withValues++;
          }
        } finally {
          await dir.remove();
        }
      }
      expect(withValues).toBeGreaterThan(0);
    } finally {
      await sb.close();
    }
  }, 60_000);
});
