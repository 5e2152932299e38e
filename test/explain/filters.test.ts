/** `select` filters checked on a record, with the sandbox's semantics, and `unknown` where the record cannot tell. */
import { describe, expect, it } from "vitest";
import { checkFilters, selectionResult } from "../../src/engine/explain/index.js";
import type { InstanceData } from "../../src/actions/instance.js";
import type { InstanceRecord } from "../../src/api/schemas.js";

const now = new Date("2025-05-01T00:00:00Z");

function data(record: Partial<InstanceRecord>, status: InstanceData["status"] = "running"): InstanceData {
  return {
    id: 1,
    name: "Taxi to the Airport",
    status,
    process_id: 1042,
    record: { id: 1, ...record },
    values: new Map(),
  };
}

const results = (d: InstanceData, select: Record<string, string | number | Array<string | number>>) =>
  Object.fromEntries(checkFilters(select, d, now).map((c) => [c.key, c.result]));

describe("checkFilters", () => {
  const d = data({
    tags: ["travel", "q4"],
    priority: "H",
    active_step_ids: [20111],
    started_time: "2025-04-01T00:00:00Z",
    deadline: "2025-04-30T00:00:00Z",
    step_deadlines: [
      { step_id: 20111, deadline: "2025-04-29T00:00:00Z" },
      { step_id: 20110, deadline: "2025-01-01T00:00:00Z" },
    ],
  });

  it("status, tags (any of), priority, name (substring, any case), active step, workflow", () => {
    expect(
      results(d, {
        status: ["running", "aborted"],
        tags: ["urgent", "q4"],
        priority: "H",
        name: "airport",
        active_step_id: 20111,
        process: 1042,
      }),
    ).toEqual({
      status: "pass",
      tags: "pass",
      priority: "pass",
      name: "pass",
      active_step_id: "pass",
      process: "pass",
    });
    expect(
      results(d, {
        status: "completed",
        tags: "urgent",
        priority: "V",
        name: "hotel",
        active_step_id: "20112",
        process: 1043,
      }),
    ).toEqual({
      status: "fail",
      tags: "fail",
      priority: "fail",
      name: "fail",
      active_step_id: "fail",
      process: "fail",
    });
  });

  it("date bounds are inclusive, relative values resolve at now, a missing date never matches", () => {
    const c = checkFilters(
      { deadline_before: "-P1D", started_time_after: "-P30D", completed_time_before: "now" },
      d,
      now,
    );
    expect(c.map((x) => [x.key, x.result, x.resolved])).toEqual([
      ["deadline_before", "pass", "2025-04-30T00:00:00.000Z"],
      ["started_time_after", "pass", "2025-04-01T00:00:00.000Z"],
      ["completed_time_before", "fail", "2025-05-01T00:00:00.000Z"],
    ]);
    expect(c[2]?.actual).toBe("no completed_time");
  });

  it("step deadlines count only for active steps; run time is measured to now while running", () => {
    expect(
      results(d, { step_deadline_before: "2025-04-29T00:00:00Z", step_deadline_after: "2025-04-30T00:00:00Z" }),
    ).toEqual({ step_deadline_before: "pass", step_deadline_after: "fail" });
    expect(results(d, { total_runtime_min: "PT720H", total_runtime_max: "29 23:00" })).toEqual({
      total_runtime_min: "pass",
      total_runtime_max: "fail",
    });
  });

  it("what the record cannot tell is unknown, and the selection is then unknown unless a filter fails", () => {
    const c = checkFilters({ lead_user: 2, organization: 1, progress_min: 50, status: "running" }, d, now);
    expect(c.map((x) => x.result)).toEqual(["unknown", "unknown", "unknown", "pass"]);
    expect(selectionResult(c)).toBe("unknown");
    expect(selectionResult(checkFilters({ lead_user: 2, status: "aborted" }, d, now))).toBe("fail");
    expect(selectionResult(checkFilters({}, d, now))).toBe("pass");
  });

  it("a completed instance has progress 100; priority null means Regular", () => {
    const done = data({ completed_time: "2025-04-02T00:00:00Z", priority: null }, "completed");
    expect(results(done, { progress_min: 100, priority: "H" })).toEqual({ progress_min: "pass", priority: "fail" });
    expect(checkFilters({ priority: "V" }, done, now)[0]?.actual).toBe("priority Regular (none)");
  });
});
