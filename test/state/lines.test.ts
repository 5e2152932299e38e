/**
 * Listing and field lines read without zod's copy (schema.ts, plainLine): kept as parsed only when the full schema
 * would return them unchanged; anything else is left to the full schema.
 */
import { describe, expect, it } from "vitest";
import { LineSchema, plainLine } from "../../src/state/schema.js";

const listing = (results: unknown[]) => ({ listing: { process_id: 7, query: { status: "running" }, run_at: "2026-06-15T12:00:00.000Z", complete: true, pages: [{ count: results.length, results }] } });
const field = (values: unknown[]) => ({ field: { process_id: 7, step: 1, action: 2, values } });

describe("plainLine", () => {
  it("keeps the parsed elements of lines the full schema returns unchanged", () => {
    const items = [{ id: 1, name: "a", status: "running", public_url: null, extra: 3 }, { id: 2, name: "", status: "aborted" }];
    const line = listing(items);
    const got = plainLine(JSON.parse(JSON.stringify(line)));
    expect(got).toEqual(LineSchema.parse(line));
    const values = [[1, { instance_id: 1, instance_name: "a", value: { inputValue: 3 }, settings: { x: 1 } }], [2, null]];
    expect(plainLine(field(values))).toEqual(LineSchema.parse(field(values)));
    const raw = listing(items);
    const kept = plainLine(raw);
    expect(kept && "listing" in kept ? kept.listing.pages[0]?.results[0] : undefined).toBe(items[0]); // not a copy
  });

  it("leaves to the full schema what it would change or refuse", () => {
    expect(plainLine(listing([{ id: 1, name: null, status: "running" }]))).toBeUndefined(); // name null → ""
    expect(plainLine(listing([{ id: 0, name: "a", status: "running" }]))).toBeUndefined();
    expect(plainLine(listing([{ id: 1, name: "a", status: "paused" }]))).toBeUndefined();
    expect(plainLine(field([[1, { instance_id: 1, value: [1] }]]))).toBeUndefined();
    expect(plainLine(field([[1, null, 3]]))).toBeUndefined();
    expect(plainLine({ ...listing([]), end: { lines: 1 } })).toBeUndefined();
    expect(plainLine({ end: { lines: 1 } })).toBeUndefined();
  });
});
