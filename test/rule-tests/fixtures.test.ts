/** Compact fixtures → instances: input objects by type, times relative to `now`, status from times, the snapshot. */
import { describe, expect, it } from "vitest";
import { plainValue } from "../../src/model/field-values.js";
import { buildInstance } from "../../src/rule-tests/fixtures.js";
import { toInputObject } from "../../src/rule-tests/input-objects.js";

const now = new Date("2025-03-01T12:00:00Z");

describe("toInputObject", () => {
  it("wraps plain values in the documented form of the declared type", () => {
    expect(toInputObject("EUR", "radio", now)).toEqual({ inputValue: { radioItemSelected: "EUR" } });
    expect(toInputObject(["A"], "checklist", now)).toEqual({
      inputValue: { itemsChecked: ["A"], itemsNotChecked: [] },
    });
    expect(toInputObject("-P1D", "date", now)).toEqual({ date: "2025-02-28T12:00:00.000Z" });
    expect(toInputObject(3, "number", now)).toEqual({ inputValue: 3 });
    expect(toInputObject("x", "text", now)).toEqual({ inputValue: "x" });
  });

  it("infers the form without a type, keeps input objects, and null means no value", () => {
    expect(toInputObject(["A", "B"], undefined, now)).toEqual({
      inputValue: { itemsChecked: ["A", "B"], itemsNotChecked: [] },
    });
    expect(toInputObject("2025-01-01T00:00:00Z", undefined, now)).toEqual({ date: "2025-01-01T00:00:00Z" });
    expect(toInputObject("hello", undefined, now)).toEqual({ inputValue: "hello" });
    expect(toInputObject({ date: "2025-01-01" }, "radio", now)).toEqual({ date: "2025-01-01" });
    expect(toInputObject({ odd: 1 }, undefined, now)).toEqual({ odd: 1 });
    expect(toInputObject(null, "text", now)).toBeUndefined();
  });

  it("every form unwraps back to the plain value the rule reads", () => {
    for (const [v, t] of [
      ["EUR", "radio"],
      [["A"], "checklist"],
      [42, "number"],
      ["x", "text"],
    ] as const) {
      expect(plainValue(toInputObject(v, t, now))).toEqual(v);
    }
  });
});

describe("buildInstance", () => {
  const env = {
    now,
    aliases: new Map([["amount", { step: 20111, action: 50222 }]]),
    fieldTypes: {},
    processId: 1042,
  };

  it("builds a consistent record: relative times, status from times, values in the snapshot", () => {
    const { data, problems } = buildInstance(
      {
        id: 7,
        aborted_time: "-PT2H",
        deadline: "+P1D",
        tags: ["a"],
        priority: "Regular",
        active_step: 20111,
        fields: { amount: 12 },
        values: { "20112:50240": null },
      },
      env,
    );
    expect(problems).toEqual([]);
    expect(data.status).toBe("aborted");
    expect(data.record?.aborted_time).toBe("2025-03-01T10:00:00.000Z");
    expect(data.record?.deadline).toBe("2025-03-02T12:00:00.000Z");
    expect(data.record?.priority).toBeNull();
    expect(data.record?.active_step_ids).toEqual([20111]);
    expect(data.record?.process).toBe("/processes/1042/");
    expect(data.values.get("20111:50222")).toEqual({ inputValue: 12 });
    expect(data.values.has("20112:50240")).toBe(true);
    expect(data.values.get("20112:50240")).toBeUndefined();
    expect(data.record?.process_snapshot?.steps).toEqual([
      { id: 20111, actions: [{ id: 50222, input_object: { inputValue: 12 } }] },
      { id: 20112, actions: [{ id: 50240 }] },
    ]);
  });

  it("a status without its time gets one at `now`; an unknown alias is a problem at that key", () => {
    const { data, problems } = buildInstance({ id: 8, status: "completed", fields: { amout: 1 } }, env);
    expect(data.record?.completed_time).toBe(now.toISOString());
    expect(problems).toEqual([
      { path: ["fields", "amout"], message: expect.stringContaining('unknown field alias "amout"') as unknown },
    ]);
  });
});
