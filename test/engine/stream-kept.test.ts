/**
 * The outcomes a streamed rule keeps until its listing ends (src/engine/stream-kept.ts) are kept compactly: a shortcut,
 * so over many random outcomes and orders, the rule's result after they are put in equals the result of keeping them
 * as objects and putting them in sorted by place (what src/engine/stream-group.ts did).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { addOutcome, newRuleResult, type RuleResult } from "../../src/engine/assemble.js";
import type { InstanceOutcome } from "../../src/engine/evaluate-instance.js";
import { KeptOutcomes } from "../../src/engine/stream-kept.js";
import type { CompiledRule } from "../../src/rules/types.js";
import type { PlannedChange } from "../../src/plan/types.js";

const RULE = { name: "r" } as CompiledRule;

const value = fc.oneof(
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("\uD800", "Expense claim #7 — Vera Jensen", "2026-06-15T12:00:00.000Z", "2026-06-15T12:00:00Z"),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.double(),
  fc.constantFrom(null, true, false, -0, Number.NaN),
  fc.array(fc.string(), { maxLength: 2 }),
);

const entry = (id: number): fc.Arbitrary<InstanceOutcome["reportEntries"][number]> =>
  fc
    .record({
      actionIndex: fc.nat({ max: 3 }),
      keys: fc.array(fc.constantFrom("expenses", "Regular", "(no tag)"), { minLength: 1, maxLength: 2 }),
      cols: fc.subarray(["id", "name", "deadline", "fields.amount"], { minLength: 1 }),
      values: fc.array(value, { minLength: 4, maxLength: 4 }),
    })
    .map(({ actionIndex, keys, cols, values }) => ({
      actionIndex,
      entry: { instance_id: id, keys, row: Object.fromEntries(cols.map((c, i) => [c, values[i]])) },
    }));

const change = (id: number): PlannedChange => ({
  id: `r:abort:${id}`,
  rule: "r",
  instance_id: id,
  instance_name: `Claim ${id}`,
  process_id: 1,
  kind: "abort",
  request: { method: "POST", path: "/instances/bulk/abort", body: { instance_ids: [id] } },
  before: { status: "running" },
  after: { status: "aborted" },
  precondition: { status: "running" },
});

/** A complete_step as a rule with a `when` on fields plans it, with text that JSON escapes or turns into null. */
const stepChange = (id: number, v: unknown): PlannedChange => ({
  id: `r:complete_step:${id}:20111`,
  rule: "r",
  instance_id: id,
  instance_name: `Expense claim #${id} — Vera "V" Jensen\\`,
  process_id: 1042,
  kind: "complete_step",
  step_id: 20111,
  request: {
    method: "POST",
    path: `/instances/${id}/complete_step/`,
    body: { step_id: 20111, actions: [{ action_id: 50231, input_object: { date: v } }], mode: "complete" },
  },
  before: { "step 20111": "active" },
  after: { "step 20111": "completed", "action 50231": v },
  precondition: { status: "running", active_step_id: 20111 },
});

/**
 * An outcome kept for the plan: mostly a report's matched instance, else a change (kept as text, or as itself when a
 * value of its after is undefined), a skipped action, an error.
 */
const outcome: fc.Arbitrary<InstanceOutcome> = fc
  .record({ id: fc.integer({ min: 1, max: 10_000 }), kind: fc.nat({ max: 12 }), started: fc.boolean(), v: value })
  .chain(({ id, kind, started, v }) =>
    fc.array(entry(id), { maxLength: 3 }).map((reportEntries): InstanceOutcome => {
      const o: InstanceOutcome = {
        instance_id: id,
        matched: true,
        changes: [],
        reportEntries,
        skipped: [],
        skipReasons: [],
        ...(started ? { started_time: "2026-01-01T00:00:00.000Z" } : {}),
      };
      if (kind === 7) o.changes.push(change(id));
      if (kind === 12) {
        const c = stepChange(id, v);
        return { ...o, reportEntries: [], changes: [{ ...c, after: { ...c.after, "action 50232": undefined } }] };
      }
      if (kind === 8 || kind === 11) {
        o.skipped.push("complete_step step 1: not active");
        o.skipReasons.push("not active");
      }
      if (kind === 10 || kind === 11) return { ...o, reportEntries: [], changes: [stepChange(id, v), change(id)] };
      if (kind === 9)
        return {
          ...o,
          matched: false,
          reportEntries: [],
          error: { code: "evaluation", rule: "r", instance_id: id, message: `rule "r", instance ${id}: boom` },
        };
      return o;
    }),
  );

/** A result as the plan reads it: its counts, changes, errors, started times and every report entry. */
function seen(r: RuleResult): unknown {
  return {
    selected: r.selected,
    matched: r.matched,
    skipped: r.skipped,
    skipReasons: [...r.skipReasons],
    changes: Array.from({ length: r.changes.length }, (_, i) => r.changes.at(i)),
    // what the plan's names read of a change beside its text
    shapes: Array.from({ length: r.changes.length }, (_, i) => r.changes.shape(r.changes.shapeIdAt(i))),
    errors: r.errors,
    startedTimes: [...r.startedTimes],
    reports: [...r.reportEntries].map(([i, entries]) => [i, [...entries]]),
  };
}

describe("KeptOutcomes", () => {
  it("puts in every outcome kept as the sorted objects did, over many random outcomes and places", () => {
    fc.assert(
      fc.property(
        fc.array(outcome, { maxLength: 80 }).chain((os) =>
          fc
            .shuffledSubarray(
              os.map((_, i) => i),
              { minLength: os.length, maxLength: os.length },
            )
            .map((places) => os.map((o, i) => [places[i] as number, o] as [number, InstanceOutcome])),
        ),
        fc.nat({ max: 3 }),
        (kept, clearAt) => {
          const objects = [...kept].sort((a, b) => a[0] - b[0]);
          const expected = newRuleResult(RULE, 1);
          for (const [, o] of objects) addOutcome(expected, o);

          const compact = new KeptOutcomes();
          // a store used, cleared (a rule killed) and used again keeps nothing of before
          if (clearAt === 0) {
            for (const [p, o] of kept) compact.add(p, o);
            compact.clear();
            expect(compact.size).toBe(0);
          }
          for (const [p, o] of kept) compact.add(p, o);
          expect(compact.size).toBe(kept.length);
          const got = newRuleResult(RULE, 1);
          const order: number[] = [];
          compact.drain((o) => {
            order.push(o.instance_id);
            addOutcome(got, o);
          });
          expect(order).toEqual(objects.map(([, o]) => o.instance_id));
          expect(seen(got)).toEqual(seen(expected));
          expect(compact.size).toBe(0);
        },
      ),
      { numRuns: 300, seed: 49 },
    );
  });
});
