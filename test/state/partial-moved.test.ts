/**
 * A partial plan after a steady run cut by its deadline, for rules whose selection bounds are relative to `now`
 * (docs/operating.md, "A partial plan"): the clock moved since the previous complete state, so each such rule asks
 * another question than that state listed. It is planned from a listing of that state whose question contains it,
 * each unchanged instance placed at the new `now` by its held record, and otherwise stays cut with the reason. Over
 * many seeds, with people's changes and clock moves of up to a week, against a stateless plan at the same moment:
 * a rule planned this way has exactly the stateless plan's changes and report rows over the instances that did not
 * change since the previous state (all of them when it is complete), the same selection when complete, and the
 * selections growing with the clock (`deadline_before: now`), shrinking with it (`started_time_after: -P20D`) and
 * moving both ways (a window) are each planned so at least once.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { StateSettings } from "../../src/state/index.js";
import { movingBounds } from "../../src/engine/exclusions.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { cleanUp } from "../helpers/temp.js";
import { statelessPlan, tempDir } from "./helpers.js";
import { steadyCutRun } from "./partial-run.js";

const START = new Date("2026-06-15T12:00:00.000Z");

/**
 * Rules with moving bounds, and rules without that read the records of a wider selection of the same workflow (the
 * previous state then holds a listing containing the moved question and the records to place its instances).
 */
const RULES = `
version: 1
rules:
  - name: open-claims
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: stage, columns: [id, deadline] }
  - name: overdue-claims
    workflow: 1042
    select: { status: [running], deadline_before: now }
    actions:
      - report: { group_by: status, columns: [id, name] }
  - name: overdue-by-priority
    workflow: 1042
    select: { status: [running], deadline_before: now }
    actions:
      - report: { group_by: priority, columns: [id] }
  - name: claims-due-this-week
    workflow: 1042
    select: { status: [running], deadline_after: now, deadline_before: +P7D }
    actions:
      - report: { group_by: status, columns: [id] }
  - name: onboardings
    workflow: 1043
    select: { status: [running] }
    actions:
      - report: { group_by: stage, columns: [id] }
  - name: abort-quiet-onboardings
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P30D }
    actions: [abort]
  - name: started-lately
    workflow: 1044
    select: { started_time_after: -P20D }
    actions:
      - report: { group_by: stage, columns: [id, name] }
  - name: ended-requests
    workflow: 1045
    select: { status: [completed, aborted] }
    actions:
      - report: { group_by: stage, columns: [id] }
  - name: completed-lately
    workflow: 1045
    select: { status: [completed], completed_time_after: -P45D }
    actions:
      - report: { group_by: status, columns: [id] }
  - name: step-deadlines-passed
    workflow: 1045
    select: { status: [running], step_deadline_before: now }
    actions:
      - report: { group_by: status, columns: [id] }
`;

let rules: RuleSet;
beforeAll(async () => {
  rules = await rulesFromYaml(RULES);
});
afterAll(cleanUp);

const changeKeys = (plan: Plan, rule: string, keep: (id: number) => boolean): string[] =>
  plan.changes
    .filter((c) => c.rule === rule && keep(c.instance_id))
    .map((c) => JSON.stringify([c.instance_id, c.kind, c.request]))
    .sort();
const rows = (plan: Plan, rule: string, keep: (id: number) => boolean): string[] =>
  plan.reports
    .filter((r) => r.rule === rule)
    .flatMap((r) => r.groups.flatMap((g) => g.instance_ids.filter(keep).map((id) => `${g.key}/${id}`)))
    .sort();

describe("a partial plan places selections whose bounds moved with the clock", () => {
  it("as the stateless plan over the instances that did not change (many seeds, clock moves, people's work)", async () => {
    const planned = new Map<string, { complete: number; partial: number }>();
    let cutWithReason = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.nat(10),
        fc.integer({ min: 1, max: 7 * 24 * 60 }),
        fc.double({ min: 0.05, max: 0.98, noNaN: true }),
        async (seed, changes, minutes, share) => {
          const sb = await startSandbox({ port: 0, instances: 300, seed, now: START });
          const dir = await tempDir();
          try {
            const settings: StateSettings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 3_600_000, fullRefresh: false };
            const { made, now, people } = await steadyCutRun(sb, rules, settings, { seed, changes, minutes, share });
            if (!made) return;
            const stateless = (await statelessPlan(sb, rules, now)).plan;
            const p = made.plan.partial;
            const cut = new Set(p?.rules_cut ?? []);
            const part = new Set((p?.rules_partial ?? []).map((r) => r.rule));
            const reasons = new Map((p?.cut_reasons ?? []).map((r) => [r.rule, r.reason]));
            const changed = new Set(people.ids);
            const unchanged = (id: number): boolean => !changed.has(id);
            const all = (): boolean => true;
            for (const rule of rules.rules) {
              const name = rule.name;
              if (!made.cut.includes(name)) continue;
              if (cut.has(name)) {
                expect(changeKeys(made.plan, name, all), name).toEqual([]);
                expect(rows(made.plan, name, all), name).toEqual([]);
                expect(reasons.get(name), name).toMatch(/\w+ \w+/);
                if (movingBounds(rule.select).length > 0) cutWithReason++;
                continue;
              }
              const keep = part.has(name) ? unchanged : all;
              expect(changeKeys(made.plan, name, keep), name).toEqual(changeKeys(stateless, name, keep));
              expect(rows(made.plan, name, keep), name).toEqual(rows(stateless, name, keep));
              if (!part.has(name))
                expect(made.plan.rules.find((r) => r.name === name)?.selected, name).toBe(
                  stateless.rules.find((r) => r.name === name)?.selected,
                );
              if (movingBounds(rule.select).length === 0) continue;
              const n = planned.get(name) ?? { complete: 0, partial: 0 };
              if (part.has(name)) n.partial++;
              else n.complete++;
              planned.set(name, n);
            }
          } finally {
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 30, seed: 4649, endOnFailure: true },
    );
    // growing with the clock (from the wider listing of open claims), shrinking with it (from its own listing), both
    // ways (a window), and a rule that aborts (from the wider listing of running onboardings)
    for (const name of [
      "overdue-claims",
      "started-lately",
      "claims-due-this-week",
      "abort-quiet-onboardings",
      // its priority from the lists priority=V and priority=H of its selection, placed from open claims' records
      "overdue-by-priority",
    ])
      expect(planned.get(name)?.complete ?? 0, name).toBeGreaterThan(0);
    expect([...planned.values()].some((n) => n.partial > 0)).toBe(true);
    // a rule that reads list elements only, after people's work in its workflow: its opt-out list (read beside its
    // selection) lacks the changed instances as its selection does, so it is planned over the unchanged ones
    expect(planned.get("overdue-claims")?.partial ?? 0).toBeGreaterThan(0);
    // a step deadline is the service's to place: such a rule stays cut, with the reason
    expect(planned.has("step-deadlines-passed")).toBe(false);
    expect(cutWithReason).toBeGreaterThan(0);
  }, 240_000);
});
