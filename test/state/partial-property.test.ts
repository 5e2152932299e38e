/**
 * A partial plan is never made-up data (docs/operating.md, "A partial plan"): after a run cut at a random request,
 * the rules the deadline cut are planned from what the state holds. Two kinds of run are cut: a first sync (cut
 * before too, at other requests, with people's work between), and a steady run after a complete one, people's work
 * and a clock move (the previous state answers what this run's changes listings show unchanged). Over many seeds,
 * against a stateless plan at the same moment: a rule named nowhere has exactly the stateless plan's changes and
 * report rows, a rule in `rules_partial` only some of them, over fewer instances than the stateless plan selects
 * (per rule: a rule whose own selection was held whole is complete), with a `total` that, when given, is the count
 * the stateless plan selects (also for a selection filtered from a wider listing); a rule in `rules_cut` none, with
 * its reason in words; a limit never lets through what the whole selection would stop. Instances a stateless conflict
 * names are set aside: a rule the state could not plan cannot clash there.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { StateSettings } from "../../src/state/index.js";
import { movingBounds } from "../../src/engine/exclusions.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { fixtureText, rulesFromYaml } from "../helpers/rules.js";
import { cleanUp } from "../helpers/temp.js";
import { statelessPlan, tempDir } from "./helpers.js";
import { partialRun, steadyCutRun } from "./partial-run.js";

const START = new Date("2026-06-15T12:00:00.000Z");
/**
 * The equality test's rules, and five without time bounds (a steady run can answer those from the previous state),
 * listed first: one reads records of instances some of which another reads a field of; of the two others, one's
 * selection is the other's filtered by status (listed once, filtered client-side), both reading a field; the last two
 * read the records of every running onboarding and every ended access request, so that after a clock move the
 * selections of `abort-stale-onboardings` (`last_updated_time_before: -P40D`) and `recently-aborted-or-done`
 * (`completed_time_after: -P60D`) can be placed at the new `now` from them.
 */
const EXTRA = `
  - name: closed-by-tag
    workflow: 1042
    select: { status: [completed, aborted] }
    actions:
      - report: { group_by: tags, columns: [id, name] }
  - name: amounts-open-or-done
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running, completed] }
    actions:
      - report: { group_by: status, columns: [id, fields.amount] }
  - name: amounts-open
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running] }
    when: fields.amount > 40
    actions:
      - report: { group_by: status, columns: [id, fields.amount] }
  - name: onboardings-by-stage
    workflow: 1043
    select: { status: [running] }
    actions:
      - report: { group_by: stage, columns: [id, name] }
  - name: ended-by-stage
    workflow: 1045
    select: { status: [completed, aborted] }
    actions:
      - report: { group_by: stage, columns: [id] }
`;
let rules: RuleSet;
beforeAll(async () => {
  const text = fixtureText("state-equality");
  const at = text.indexOf("rules:\n") + "rules:\n".length;
  rules = await rulesFromYaml(text.slice(0, at) + EXTRA.slice(1) + text.slice(at));
});
afterAll(cleanUp);

const changeKeys = (plan: Plan, rule: string, aside: Set<number>): string[] =>
  plan.changes
    .filter((c) => c.rule === rule && !aside.has(c.instance_id))
    .map((c) => JSON.stringify([c.instance_id, c.kind, c.request]))
    .sort();
const rows = (plan: Plan, rule: string): string[] =>
  plan.reports
    .filter((r) => r.rule === rule)
    .flatMap((r) => r.groups.flatMap((g) => g.instance_ids.map((id) => `${g.key}/${id}`)))
    .sort();

interface Seen {
  complete: number;
  partial: number;
  partialWithData: number;
  cut: number;
  plans: number;
  /** cut by the deadline and planned from the state (complete or partial) */
  fromState: number;
  /** cut by the deadline, planned complete from the state while another rule of its workflow is partial */
  completeBeside: number;
  /** a partial rule's total given for a selection filtered from a wider listing */
  filteredTotal: number;
  partialButAll: number;
  /** cut by the deadline, with a bound relative to `now` that moved, and planned from the state */
  moved: number;
  movedComplete: number;
}

const newSeen = (): Seen => ({
  complete: 0,
  partial: 0,
  partialWithData: 0,
  cut: 0,
  plans: 0,
  fromState: 0,
  completeBeside: 0,
  filteredTotal: 0,
  partialButAll: 0,
  moved: 0,
  movedComplete: 0,
});

/** The partial plan against a stateless plan at the same moment (the property, as the header says). */
function check(
  made: { plan: Plan; cut: string[] },
  stateless: Plan,
  seen: Seen,
  moved?: { changed: ReadonlySet<number> },
): void {
  const { plan } = made;
  seen.plans++;
  const p = plan.partial;
  expect(p).toBeDefined();
  const aside = new Set(
    stateless.errors.flatMap((e) => (e.code === "conflict" && e.instance_id ? [e.instance_id] : [])),
  );
  const cut = new Set(p?.rules_cut ?? []);
  const part = new Map((p?.rules_partial ?? []).map((r) => [r.rule, r]));
  const reasons = new Map((p?.cut_reasons ?? []).map((r) => [r.rule, r.reason]));
  const workflowOf = new Map(plan.rules.map((r) => [r.name, r.workflow_id]));
  const partialWorkflows = new Set([...part.keys()].map((r) => workflowOf.get(r)));
  for (const compiled of rules.rules) {
    const rule = compiled.name;
    const mine = changeKeys(plan, rule, aside);
    const full = changeKeys(stateless, rule, aside);
    const whole = stateless.rules.find((x) => x.name === rule);
    if (moved && made.cut.includes(rule) && !cut.has(rule) && movingBounds(compiled.select).length > 0) {
      // a selection placed at the new `now` from a listing the previous state holds: exactly the stateless plan's
      // answer over the instances that did not change since (those that did are not known to it)
      seen.moved++;
      if (!part.has(rule)) seen.movedComplete++;
      const keep = (id: number): boolean => !moved.changed.has(id);
      const changes = (keys: string[]): string[] => keys.filter((k) => keep((JSON.parse(k) as [number])[0]));
      const ofRows = (keys: string[]): string[] => keys.filter((k) => keep(Number(k.slice(k.lastIndexOf("/") + 1))));
      expect(changes(mine), rule).toEqual(changes(full));
      expect(ofRows(rows(plan, rule)), rule).toEqual(ofRows(rows(stateless, rule)));
    }
    if (cut.has(rule)) {
      seen.cut++;
      expect(mine, rule).toEqual([]);
      expect(rows(plan, rule), rule).toEqual([]);
      expect(reasons.get(rule), rule).toMatch(/\w+ \w+/);
    } else if (part.has(rule)) {
      seen.partial++;
      seen.fromState++;
      const r = part.get(rule);
      const entry = plan.rules.find((x) => x.name === rule);
      expect(entry?.selected).toBe(r?.selected);
      expect(r?.selected, rule).toBeLessThanOrEqual(whole?.selected ?? 0);
      if (r?.selected === whole?.selected) seen.partialButAll++;
      // the total is the selection's count at this moment: what the stateless plan selects
      if (r?.total !== null && r?.total !== undefined) {
        expect(r.total, rule).toBe(whole?.selected);
        // per rule: a partial rule lacks some of its own selection
        expect(r.selected, rule).toBeLessThan(r.total);
        if (rule === "amounts-open") seen.filteredTotal++;
      }
      if (mine.length + rows(plan, rule).length > 0) seen.partialWithData++;
      const all = new Set(full);
      for (const k of mine) expect(all.has(k), `${rule} ${k}`).toBe(true);
      const allRows = new Set(rows(stateless, rule));
      for (const k of rows(plan, rule)) expect(allRows.has(k), `${rule} ${k}`).toBe(true);
    } else {
      seen.complete++;
      if (made.cut.includes(rule)) {
        seen.fromState++;
        if (partialWorkflows.has(workflowOf.get(rule))) seen.completeBeside++;
      }
      expect(mine, rule).toEqual(full);
      expect(rows(plan, rule), rule).toEqual(rows(stateless, rule));
    }
  }
}

describe("a partial plan from what the state holds", () => {
  it("complete rules as a stateless plan, partial ones a part of it, cut ones nothing (many seeds, random cuts)", async () => {
    const seen = newSeen();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(fc.record({ share: fc.double({ min: 0.3, max: 1, noNaN: true }), changes: fc.nat(6) }), {
          minLength: 0,
          maxLength: 2,
        }),
        fc.double({ min: 0.05, max: 0.98, noNaN: true }),
        fc.integer({ min: 3, max: 80 }),
        async (seed, before, share, everyRecords) => {
          const sb = await startSandbox({ port: 0, instances: 300, seed, now: START });
          const dir = await tempDir();
          try {
            const settings: StateSettings = {
              dir: dir.dir,
              resyncAfterMs: 30 * 24 * 3_600_000,
              fullRefresh: false,
              checkpoints: { everyRecords, everyMs: 3_600_000 },
            };
            const whole = (await statelessPlan(sb, rules, START)).requests;
            // earlier runs cut too, with people's work between them: the last one continues their sync
            for (const [n, b] of before.entries()) {
              await partialRun(sb, rules, START, settings, Math.max(1, Math.round(b.share * whole)), false);
              sb.simulate({ seed: seed + n, changes: b.changes });
            }
            const made = await partialRun(sb, rules, START, settings, Math.max(1, Math.round(share * whole)), true);
            if (!made) return; // it finished before its cut
            check(made, (await statelessPlan(sb, rules, START)).plan, seen);
          } finally {
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 16, seed: 4647, endOnFailure: true },
    );
    // the property met partial plans with rules of each kind
    expect(seen.plans).toBeGreaterThan(8);
    expect(seen.partialWithData).toBeGreaterThan(0);
    expect(seen.complete).toBeGreaterThan(0);
    // a selection filtered from a wider listing: its count known (and equal to the stateless plan's, as checked)
    expect(seen.filteredTotal).toBeGreaterThan(0);
  }, 240_000);

  it("a steady run cut after people's work: the previous state answers what did not change (many seeds, random cuts)", async () => {
    const seen = newSeen();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.nat(12),
        fc.integer({ min: 1, max: 600 }),
        fc.double({ min: 0.05, max: 0.98, noNaN: true }),
        async (seed, changes, minutes, share) => {
          const sb = await startSandbox({ port: 0, instances: 300, seed, now: START });
          const dir = await tempDir();
          try {
            const settings: StateSettings = { dir: dir.dir, resyncAfterMs: 30 * 24 * 3_600_000, fullRefresh: false };
            const { made, now, people } = await steadyCutRun(sb, rules, settings, { seed, changes, minutes, share });
            if (!made) return;
            check(made, (await statelessPlan(sb, rules, now)).plan, seen, { changed: new Set(people.ids) });
          } finally {
            await sb.close();
            await dir.remove();
          }
        },
      ),
      { numRuns: 20, seed: 4648, endOnFailure: true },
    );
    expect(seen.plans).toBeGreaterThan(6);
    // rules the deadline cut, planned from the previous state with this run's changes listings
    expect(seen.fromState).toBeGreaterThan(0);
    expect(seen.complete).toBeGreaterThan(0);
    // per rule: complete while another rule of its workflow is partial
    expect(seen.completeBeside).toBeGreaterThan(0);
    // rules whose bounds moved with the clock, placed at the new `now` from the previous state (and equal, as checked)
    expect(seen.moved).toBeGreaterThan(0);
    expect(seen.movedComplete).toBeGreaterThan(0);
  }, 240_000);
});
