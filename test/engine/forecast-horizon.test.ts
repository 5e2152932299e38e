/**
 * The forecast's horizon reasoning (src/engine/forecast-horizon.ts): which bounds of a query move with the instant,
 * the widest and narrowest question over a horizon, and whether a record's times put an instance in the selection at
 * an instant, judged as the list's filters judge (inclusive bounds, microseconds, any active step's deadline).
 */
import { describe, expect, it } from "vitest";
import {
  boundIndex,
  boundKind,
  extremes,
  horizonOf,
  recordTimes,
  sweeps,
  within,
} from "../../src/engine/forecast-horizon.js";
import type { InstanceRecord } from "../../src/api/schemas.js";
import { rulesFromYaml } from "../helpers/rules.js";

const T0 = Date.parse("2026-06-15T12:00:00.000Z");
const DAY = 86_400_000;
const HORIZON = [T0, T0 + DAY, T0 + 2 * DAY];

const YAML = `version: 1
rules:
  - name: stale
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P20D }
    actions: [abort]
  - name: window
    workflow: 1044
    select: { status: running, deadline_after: now, deadline_before: +P5D }
    actions: [{ report: { group_by: status } }]
  - name: fixed
    workflow: 1044
    select: { started_time_after: "2026-01-01T00:00:00Z", started_time_before: -P3D }
    actions: [{ report: { group_by: status } }]
  - name: steps
    workflow: 1045
    select: { status: running, step_deadline_before: now, step_deadline_after: "2026-06-01T00:00:00Z" }
    actions: [{ report: { group_by: status } }]
`;

const iso = (t: number): string => new Date(t).toISOString();

describe("forecast horizon", () => {
  it("tells a relative bound from a fixed one by the rules, and refuses a value both resolve to", async () => {
    const rules = (await rulesFromYaml(YAML)).rules;
    const index = boundIndex(rules, new Date(T0));
    const stale = boundKind(index, "last_updated_time_before", iso(T0 - 20 * DAY), T0, HORIZON);
    expect(typeof stale === "object" && stale.at(T0 + DAY)).toBe(T0 + DAY - 20 * DAY);
    expect(boundKind(index, "started_time_after", "2026-01-01T00:00:00.000Z", T0, HORIZON)).toBe("fixed");
    // a fixed value of another rule that happens to equal a relative one at this instant: cannot be told
    const first = rules[0];
    if (!first) throw new Error("no rule");
    const clash = boundIndex(
      [...rules, { ...first, select: { last_updated_time_before: iso(T0 - 20 * DAY) } }],
      new Date(T0),
    );
    expect(boundKind(clash, "last_updated_time_before", iso(T0 - 20 * DAY), T0, HORIZON)).toBe("unknown");
  });

  it("widest and narrowest: _before at the horizon and the start, _after the other way round; fixed bounds kept", async () => {
    const index = boundIndex((await rulesFromYaml(YAML)).rules, new Date(T0));
    const q = { deadline_after: iso(T0), deadline_before: iso(T0 + 5 * DAY), status: "running" };
    const h = horizonOf(index, 1044, q, T0, HORIZON);
    expect(h?.moved.map((m) => m.key).sort()).toEqual(["deadline_after", "deadline_before"]);
    const { widest, narrowest } = extremes(q, h?.moved ?? [], T0, T0 + 2 * DAY);
    expect(widest).toEqual({ deadline_after: iso(T0), deadline_before: iso(T0 + 7 * DAY), status: "running" });
    expect(narrowest).toEqual({
      deadline_after: iso(T0 + 2 * DAY),
      deadline_before: iso(T0 + 5 * DAY),
      status: "running",
    });
    // the same selection at a later instant has the same key
    const later = { deadline_after: iso(T0 + DAY), deadline_before: iso(T0 + 6 * DAY), status: "running" };
    expect(horizonOf(index, 1044, later, T0 + DAY, HORIZON)?.key).toBe(h?.key);
    // a window moves both ways: no sweep; a one-way bound: the selection at the start plus the slice it sweeps
    expect(sweeps(h?.moved ?? [], widest, T0, T0 + 2 * DAY)).toBeUndefined();
    const staleQ = { status: "running", last_updated_time_before: iso(T0 - 20 * DAY) };
    const stale = horizonOf(index, 1043, staleQ, T0, HORIZON);
    const w = extremes(staleQ, stale?.moved ?? [], T0, T0 + 2 * DAY).widest;
    expect(sweeps(stale?.moved ?? [], w, T0, T0 + 2 * DAY)).toEqual({
      base: "narrowest",
      slices: [
        {
          status: "running",
          last_updated_time_after: iso(T0 - 20 * DAY),
          last_updated_time_before: iso(T0 - 18 * DAY),
        },
      ],
    });
    // no relative bound, or an ordering: not answered from a horizon
    expect(horizonOf(index, 1044, { status: "running" }, T0, HORIZON)).toBeUndefined();
    expect(horizonOf(index, 1044, { ...q, ordering: "deadline" }, T0, HORIZON)).toBeUndefined();
  });

  it("judges a record's times as the filters do: inclusive, microseconds past the bound, one active step's deadline", async () => {
    const index = boundIndex((await rulesFromYaml(YAML)).rules, new Date(T0));
    const stale = horizonOf(index, 1043, { last_updated_time_before: iso(T0 - 20 * DAY) }, T0, HORIZON);
    const at = (v: string) =>
      new Map([
        ["last_updated_time", recordTimes({ id: 1, last_updated_time: v } as InstanceRecord, "last_updated_time")],
      ]);
    const bound = iso(T0 + DAY - 20 * DAY);
    expect(within(at(bound), stale?.moved ?? [], T0 + DAY)).toBe(true); // on the bound: in
    // a microsecond past it, with an offset: out
    expect(within(at(bound.replace("Z", "001+00:00")), stale?.moved ?? [], T0 + DAY)).toBe(false);
    expect(within(at(bound), stale?.moved ?? [], T0)).toBe(false); // a day earlier the bound was a day earlier

    const steps = horizonOf(
      index,
      1045,
      { status: "running", step_deadline_after: "2026-06-01T00:00:00.000Z", step_deadline_before: iso(T0) },
      T0,
      HORIZON,
    );
    // the fixed bound on the same field stays with the moving one: one deadline must meet both
    expect(steps?.moved.map((m) => `${m.key}:${m.moves}`).sort()).toEqual([
      "step_deadline_after:false",
      "step_deadline_before:true",
    ]);
    const record = {
      id: 2,
      active_step_ids: [7],
      step_deadlines: [
        { step_id: 7, deadline: "2026-05-20T00:00:00Z" }, // active, before the fixed bound
        { step_id: 8, deadline: iso(T0 + DAY) }, // in range tomorrow, but not an active step
      ],
    } as unknown as InstanceRecord;
    const times = new Map([["step_deadline", recordTimes(record, "step_deadline")]]);
    expect(within(times, steps?.moved ?? [], T0 + 2 * DAY)).toBe(false);
    const active = { ...record, active_step_ids: [7, 8] } as InstanceRecord;
    const both = new Map([["step_deadline", recordTimes(active, "step_deadline")]]);
    expect(within(both, steps?.moved ?? [], T0)).toBe(false);
    expect(within(both, steps?.moved ?? [], T0 + DAY)).toBe(true);
  });
});
