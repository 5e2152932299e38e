/**
 * Which held question contains a moved one (src/state/held-moved.ts): the same parameters, the same or more statuses,
 * each date range as wide or wider; what is then checked per instance (a status, date bounds read from the record).
 */
import { describe, expect, it } from "vitest";
import { containing } from "../../src/state/held-moved.js";

const T0 = "2026-06-15T12:00:00.000Z";
const T1 = "2026-06-16T12:00:00.000Z";

describe("containing", () => {
  it("a bound that narrows with the clock: the listing asked at the old now, each instance's time checked", () => {
    const how = containing({ status: ["running"], deadline_after: T0 }, { status: ["running"], deadline_after: T1 });
    expect(how).toEqual({
      statuses: undefined,
      dates: [{ key: "deadline_after", field: "deadline", bound: Date.parse(T1), after: true }],
      keys: [],
    });
  });

  it("a bound that widens with the clock: only a wider listing contains it", () => {
    expect(
      containing({ status: ["running"], deadline_before: T0 }, { status: ["running"], deadline_before: T1 }),
    ).toMatchObject({ why: "deadline_before is narrower" });
    expect(containing({ status: ["running", "completed"] }, { status: ["running"], deadline_before: T1 })).toEqual({
      statuses: new Set(["running"]),
      dates: [{ key: "deadline_before", field: "deadline", bound: Date.parse(T1), after: false }],
      keys: [],
    });
  });

  it("a priority, an active step or one tag more: read from the record, as the engine narrows a listing", () => {
    expect(
      containing({ status: ["running"] }, { status: ["running"], priority: "H", active_step_id: 20111, tags: ["vip"] }),
    ).toEqual({
      statuses: undefined,
      dates: [],
      keys: [
        { key: "priority", value: "H" },
        { key: "active_step_id", value: "20111" },
        { key: "tags", value: "vip" },
      ],
    });
  });

  it("refuses other parameters, a missing one, fewer statuses, and what a record does not say", () => {
    expect(
      containing({ status: ["running"], priority: "H" }, { status: ["running"], deadline_before: T1 }),
    ).toHaveProperty("why");
    expect(containing({ status: ["running"] }, { status: ["running"], tags: ["vip", "hr"] })).toHaveProperty("why");
    expect(containing({ status: ["running"] }, { status: ["running"], name: "x" })).toHaveProperty("why");
    expect(containing({ status: ["running"] }, { status: ["running", "completed"] })).toHaveProperty("why");
    expect(containing({ status: ["running"] }, { status: ["running"], step_deadline_before: T1 })).toHaveProperty(
      "why",
    );
    expect(containing({ status: ["running"] }, { status: ["running"], ended_time_after: T1 })).toHaveProperty("why");
    expect(containing({ status: ["running"] }, { status: ["running"], total_runtime_min: "P2D" })).toHaveProperty(
      "why",
    );
    expect(
      containing({ ordering: "-started_time" }, { ordering: "-started_time", started_time_after: T1 }),
    ).toHaveProperty("why");
  });

  it("the same bound needs no check", () => {
    expect(
      containing({ status: ["running"], started_time_after: T0 }, { status: ["running"], started_time_after: T0 }),
    ).toEqual({ statuses: undefined, dates: [], keys: [] });
  });
});
