/**
 * The hand-written complete_step body check (src/api/step-body.ts) answers as CompleteStepBodySchema does: the same
 * verdict, the same value (unknown keys dropped, key order included) and the same first problem, for random JSON
 * bodies shaped like real ones and broken in every way a hand-edited plan file can be.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CompleteStepBodySchema, describeIssue } from "../../src/api/schemas.js";
import { parseCompleteStepBody } from "../../src/api/step-body.js";

const json = fc.jsonValue({ maxDepth: 2 });
/** numbers a body may hold: small ids, fractions, huge and negative values around the safe-integer edge */
const number = fc.oneof(
  fc.integer({ min: -5, max: 100_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 1,
    Number.MIN_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER - 1,
    1e21,
    -0,
    0.5,
  ),
);
/** a value where a number belongs: mostly numbers, sometimes anything JSON holds */
const numberish = fc.oneof({ weight: 4, arbitrary: number }, { weight: 1, arbitrary: json });
/** an optional key: absent, or present with a value */
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<{ present: false } | { present: true; value: T }> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant({ present: false as const }) },
    { weight: 3, arbitrary: arb.map((value) => ({ present: true as const, value })) },
  );

const action = fc.oneof(
  { weight: 6, arbitrary: fc.record({ action_id: maybe(numberish), input_object: maybe(json), extra: maybe(json) }) },
  { weight: 1, arbitrary: json.map((v) => ({ raw: v })) },
);
const actions = fc.oneof(
  { weight: 5, arbitrary: fc.array(action, { maxLength: 4 }) },
  { weight: 1, arbitrary: json.map((v) => ({ raw: v })) },
);
const mode = fc.oneof({ weight: 4, arbitrary: fc.constantFrom("save", "complete") }, { weight: 1, arbitrary: json });

type Maybe<T> = { present: false } | { present: true; value: T };
const put = (
  o: Record<string, unknown>,
  key: string,
  m: Maybe<unknown>,
  build: (v: never) => unknown = (v) => v,
): void => {
  if (m.present) o[key] = build(m.value as never);
};

/** A body built from its parts, keys in a random order (the schema's order must not depend on the body's). */
const body = fc.oneof(
  {
    weight: 9,
    arbitrary: fc
      .record({
        step_id: maybe(numberish),
        actions: maybe(actions),
        mode: maybe(mode),
        other: maybe(json),
        order: fc.shuffledSubarray(["step_id", "actions", "mode", "other"], { minLength: 4 }),
      })
      .map((r) => {
        const parts: Record<string, unknown> = {};
        put(parts, "step_id", r.step_id);
        put(parts, "actions", r.actions, (a: unknown) =>
          Array.isArray(a)
            ? a.map((x: Record<string, unknown>) => {
                if ("raw" in x) return x.raw;
                const o: Record<string, unknown> = {};
                put(o, "action_id", x.action_id as Maybe<unknown>);
                put(o, "input_object", x.input_object as Maybe<unknown>);
                put(o, "extra", x.extra as Maybe<unknown>);
                return o;
              })
            : (a as { raw: unknown }).raw,
        );
        put(parts, "mode", r.mode);
        put(parts, "other", r.other);
        return Object.fromEntries(r.order.filter((k) => k in parts).map((k) => [k, parts[k]]));
      }),
  },
  { weight: 1, arbitrary: json },
);

function viaSchema(b: unknown): unknown {
  const r = CompleteStepBodySchema.safeParse(b);
  return r.success
    ? { success: true, data: JSON.stringify(r.data) }
    : { success: false, issue: describeIssue(r.error) };
}
function byHand(b: unknown): unknown {
  const r = parseCompleteStepBody(b);
  return r.success ? { success: true, data: JSON.stringify(r.data) } : { success: false, issue: r.issue };
}

describe("complete_step body without zod", () => {
  it("gives the schema's verdict, value and first problem for random bodies", () => {
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(body, (b) => {
        const want = viaSchema(b);
        expect(byHand(b)).toEqual(want);
        if ((want as { success: boolean }).success) valid++;
        else invalid++;
      }),
      { numRuns: 5000, seed: 36 },
    );
    // the generator reaches both sides
    expect(valid).toBeGreaterThan(200);
    expect(invalid).toBeGreaterThan(200);
  });

  it("agrees on the bodies a hand edit most often produces", () => {
    const bodies: unknown[] = [
      null,
      [],
      "x",
      {},
      { step_id: 20111 },
      { step_id: 20111, mode: "save", actions: [{ action_id: 50230, input_object: { value: "x" } }] },
      { step_id: "20111" },
      { step_id: 1.5 },
      { step_id: 2 ** 60 },
      { step_id: 1, actions: [{ action_id: 1 }] },
      { step_id: 1, actions: [{}] },
      { step_id: 1, actions: [null] },
      { step_id: 1, mode: null },
      { step_id: 1, mode: "approve" },
      { actions: [1], step_id: "x" },
      { step_id: 1, actions: [{ action_id: 2, input_object: null, note: "dropped" }], note: "dropped" },
    ];
    for (const b of bodies) expect(byHand(b), JSON.stringify(b)).toEqual(viaSchema(b));
  });
});
