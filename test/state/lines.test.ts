/**
 * List element and field value lines read without zod's copy (schema.ts, itemLine / valueLine): kept as parsed only
 * when the full schema would return them unchanged; otherwise as the full schema returns them, or refused.
 */
import { describe, expect, it } from "vitest";
import { FormFieldValueSchema, InstanceListItemSchema } from "../../src/api/schemas.js";
import { itemLine, valueLine } from "../../src/state/schema.js";

const item = (v: unknown, l: unknown = 3, p: unknown = 0) => ({ item: { l, p, v } });
const value = (v: unknown, id: unknown = 1, f: unknown = [7, 1, 2]) => ({ value: { f, id, v } });

describe("itemLine and valueLine", () => {
  it("keep the parsed element when the full schema returns it unchanged (not a copy)", () => {
    const element = { id: 1, name: "a", status: "running", public_url: null, extra: 3 };
    const got = itemLine(item(element));
    expect(got).toEqual({ l: 3, p: 0, v: InstanceListItemSchema.parse(element) });
    expect(got?.v).toBe(element);
    const field = { instance_id: 1, instance_name: "a", value: { inputValue: 3 }, settings: { x: 1 } };
    const v = valueLine(value(field));
    expect(v).toEqual({ f: [7, 1, 2], id: 1, v: FormFieldValueSchema.parse(field) });
    expect(v?.v).toBe(field);
    expect(valueLine(value(null))).toEqual({ f: [7, 1, 2], id: 1, v: null });
  });

  it("give what the full schema gives for what it would change, and refuse what it refuses", () => {
    const nullName = { id: 1, name: null, status: "running" };
    expect(itemLine(item(nullName))?.v).toEqual(InstanceListItemSchema.parse(nullName));
    expect(itemLine(item({ id: 0, name: "a", status: "running" }))).toBeUndefined();
    expect(itemLine(item({ id: 1, name: "a", status: "paused" }))).toBeUndefined();
    expect(itemLine(item({ id: 1, name: "a", status: "running" }, -1))).toBeUndefined();
    expect(itemLine(item({ id: 1, name: "a", status: "running" }, 1, "0"))).toBeUndefined();
    expect(itemLine({ ...item({ id: 1, name: "a", status: "running" }), end: { lines: 1 } })).toBeUndefined();
    expect(valueLine(value({ instance_id: 1, value: [1] }))).toEqual(
      FormFieldValueSchema.safeParse({ instance_id: 1, value: [1] }).success ? expect.anything() : undefined,
    );
    expect(valueLine(value(null, 1, [7, 1]))).toBeUndefined();
    expect(valueLine(value(null, "1"))).toBeUndefined();
    expect(valueLine({ end: { lines: 1 } })).toBeUndefined();
  });
});
