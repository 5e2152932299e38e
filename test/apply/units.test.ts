/** The pure parts of apply: staleness of a read record, batches, option parsing (each kind's effect: test/actions). */
import { describe, expect, it } from "vitest";
import { batches } from "../../src/apply/batches.js";
import { staleReason } from "../../src/apply/staleness.js";
// the plan-file change and instance record fixtures the kinds' own tests use
import { change, record, T0 } from "../actions/helpers.js";

const T1 = "2026-01-01T11:00:00.000Z";

describe("staleReason", () => {
  const listed = { baseline: undefined, listedAsChanged: true };
  it("compares last_updated_time with the baseline when there is one", () => {
    expect(staleReason(change("complete_step"), record({}), { baseline: T0, listedAsChanged: true })).toBeUndefined();
    expect(
      staleReason(change("complete_step"), record({ last_updated_time: T1 }), { baseline: T0, listedAsChanged: false }),
    ).toMatch(/changed since the plan/);
  });
  it("without a baseline, an instance on the changed list is stale", () => {
    expect(staleReason(change("abort"), record({}), listed)).toMatch(
      /the plan recorded no earlier update time to compare with/,
    );
    expect(staleReason(change("abort"), record({}), { baseline: undefined, listedAsChanged: false })).toBeUndefined();
  });
  it("says plainly what happened and when: updated after the plan read it, which had seen no update since its bound", () => {
    const seen = { baseline: undefined, listedAsChanged: true, seenBefore: "2026-01-01T10:30:00.000Z" };
    expect(staleReason(change("abort"), record({ last_updated_time: T1 }), seen)).toBe(
      `the instance changed since the plan: it was updated at ${T1}, and the plan saw it last updated before 2026-01-01T10:30:00.000Z`,
    );
    // updated before the bound: the plan saw that update already
    expect(
      staleReason(change("abort"), record({ last_updated_time: "2026-01-01T10:00:00.000Z" }), seen),
    ).toBeUndefined();
    expect(
      staleReason(change("complete_step"), record({ last_updated_time: T1 }), { baseline: T0, listedAsChanged: false }),
    ).toBe(
      `the instance changed since the plan: it was updated at ${T1}, and the plan saw it as last updated at ${T0}`,
    );
  });
  it("checks the precondition on the record", () => {
    expect(
      staleReason(change("save_step"), record({ active_step_ids: [20112] }), { baseline: T0, listedAsChanged: false }),
    ).toMatch(/step 20111 is no longer active \(active: 20112\)/);
    expect(
      staleReason(change("abort"), record({ completed_time: T1 }), { baseline: T0, listedAsChanged: false }),
    ).toMatch(/no longer running: completed at/);
  });
});

describe("small parts", () => {
  it("batches", () => {
    expect(batches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(() => batches([1], 0)).toThrow(RangeError);
  });
});
