/**
 * The state room's pure parts, by property: the slices bounds.ts lists bring a cached selection up to date exactly
 * (against a direct selection, over random instances and bound moves), and compact.ts gives records back equal.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  canonicalQuery,
  changedQuery,
  movement,
  shapeKey,
  sliceable,
  slices,
  type CanonicalQuery,
} from "../../src/state/bounds.js";
import { compactRecord, expandRecord } from "../../src/state/compact.js";
import { InstanceRecordSchema } from "../../src/api/schemas.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";

const DAY = 86_400_000;
const T0 = Date.parse("2026-06-15T12:00:00.000Z");
const FIELDS = ["started_time", "deadline", "last_updated_time"] as const;
type Field = (typeof FIELDS)[number];
type Inst = { id: number } & Record<Field, number | null>;

/** The service's meaning of date bounds (docs/service.md, "List instances"): inclusive, no value never matches. */
function matches(i: Inst, q: CanonicalQuery): boolean {
  for (const f of FIELDS) {
    const v = i[f];
    const after = q[`${f}_after`];
    const before = q[`${f}_before`];
    if (after === undefined && before === undefined) continue;
    if (v === null) return false;
    if (typeof after === "string" && v < Date.parse(after)) return false;
    if (typeof before === "string" && v > Date.parse(before)) return false;
  }
  return true;
}

const select = (all: Inst[], q: CanonicalQuery): Set<number> =>
  new Set(all.filter((i) => matches(i, q)).map((i) => i.id));

const bound = fc.record({
  field: fc.constantFrom(...FIELDS),
  side: fc.constantFrom("after", "before"),
  offsetDays: fc.integer({ min: -60, max: 60 }),
});

describe("bounds: a cached selection brought up to date by slices equals a direct selection", () => {
  it("for random instances, relative bounds and clock steps (instances unchanged between the runs)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            started_time: fc.option(fc.integer({ min: -90, max: 90 })),
            deadline: fc.option(fc.integer({ min: -90, max: 90 })),
            last_updated_time: fc.option(fc.integer({ min: -90, max: 90 })),
          }),
          { maxLength: 60 },
        ),
        fc.uniqueArray(bound, { maxLength: 4, selector: (b) => `${b.field}_${b.side}` }),
        fc.integer({ min: 0, max: 40 * 24 }),
        (raw, bounds, hours) => {
          const all: Inst[] = raw.map((r, k) => ({
            id: k + 1,
            started_time: r.started_time === null ? null : T0 + r.started_time * DAY + k,
            deadline: r.deadline === null ? null : T0 + r.deadline * DAY + 2 * k,
            last_updated_time: r.last_updated_time === null ? null : T0 + r.last_updated_time * DAY - k,
          }));
          const at = (now: number): CanonicalQuery =>
            canonicalQuery(
              Object.fromEntries(
                bounds.map((b) => [`${b.field}_${b.side}`, new Date(now + b.offsetDays * DAY).toISOString()]),
              ),
            );
          const t1 = T0 + hours * 3_600_000;
          const q0 = at(T0);
          const q1 = at(t1);
          expect(shapeKey(1, q0)).toBe(shapeKey(1, q1));
          const mv = movement(q0, T0, q1, t1);
          expect(mv.ok).toBe(true);
          const plan = slices(q0, q1, mv.moved);
          if (!plan) return; // a step_deadline after-bound only; not among these fields
          const members = select(all, q0);
          for (const s of plan.filter((p) => p.effect === "leave"))
            for (const id of select(all, s.query)) members.delete(id);
          for (const s of plan.filter((p) => p.effect === "enter"))
            for (const id of select(all, s.query)) members.add(id);
          expect([...members].sort((a, b) => a - b)).toEqual([...select(all, q1)].sort((a, b) => a - b));
        },
      ),
      { numRuns: 400, seed: 24 },
    );
  });

  it("tells a moved relative bound from a fixed date and from another question", () => {
    const q0 = canonicalQuery({
      status: ["running"],
      deadline_before: "2026-06-15T12:00:00.000Z",
      started_time_after: "2026-01-01T00:00:00.000Z",
    });
    const q1 = canonicalQuery({
      status: ["running"],
      deadline_before: "2026-06-15T12:10:00.000Z",
      started_time_after: "2026-01-01T00:00:00.000Z",
    });
    expect(movement(q0, T0, q1, T0 + 600_000)).toEqual({
      ok: true,
      moved: [{ key: "deadline_before", from: T0, to: T0 + 600_000 }],
    });
    // a bound that moved by anything but the clock's step is another question
    expect(movement(q0, T0, q1, T0 + 300_000).ok).toBe(false);
    expect(shapeKey(1042, q0)).not.toBe(shapeKey(1042, canonicalQuery({ ...q0, status: ["completed"] })));
    expect(sliceable(canonicalQuery({ ordering: "-started_time" }))).toBe(false);
    expect(sliceable(canonicalQuery({ total_runtime_min: "P1D" }))).toBe(false);
    expect(sliceable(q0)).toBe(true);
    // a step deadline's after-bound cannot be sliced (any active step's deadline may keep an instance in)
    expect(
      slices({ step_deadline_after: "2026-06-15T12:00:00.000Z" }, { step_deadline_after: "2026-06-15T13:00:00.000Z" }, [
        { key: "step_deadline_after", from: T0, to: T0 + 3_600_000 },
      ]),
    ).toBeUndefined();
    expect(changedQuery({ last_updated_time_after: "2026-06-20T00:00:00.000Z" }, T0)).toEqual({
      last_updated_time_after: "2026-06-20T00:00:00.000Z",
    });
    expect(changedQuery({ status: ["running"] }, T0)).toEqual({
      status: ["running"],
      last_updated_time_after: "2026-06-15T12:00:00.000Z",
    });
  });
});

describe("compact records", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 400, seed: 9, now: new Date(T0) });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("expand(compact(record)) equals the record, with one skeleton per structure", () => {
    const skeletons = new Map<string, unknown>();
    const ids = sb.store.ids();
    fc.assert(
      fc.property(fc.constantFrom(...ids), fc.boolean(), fc.boolean(), (id, injectValues, stepsTimeFrame) => {
        const record = InstanceRecordSchema.parse(
          JSON.parse(JSON.stringify(sb.store.record(id, { injectValues, stepsTimeFrame }))),
        );
        const compact = compactRecord(record, skeletons);
        expect(expandRecord(compact, skeletons)).toEqual(record);
      }),
      { numRuns: 300, seed: 24 },
    );
    // four workflows, with and without step times: a handful of skeletons for hundreds of records
    expect(skeletons.size).toBeLessThanOrEqual(8);
    // a missing skeleton is no answer (the record is read again), never a wrong one
    const record = InstanceRecordSchema.parse(
      JSON.parse(JSON.stringify(sb.store.record(ids[0] ?? 0, { injectValues: true }))),
    );
    expect(expandRecord(compactRecord(record, new Map()), new Map())).toBeUndefined();
  });
});
