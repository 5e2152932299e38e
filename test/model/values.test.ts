/** Values by meaning: numbers, instants, options and sets, never JSON text. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalInput,
  fieldTypeOf,
  instantOf,
  isoOfInstant,
  normalizeValue,
  sameValue,
} from "../../src/model/values.js";

describe("normalizeValue", () => {
  it("reads each documented input object by its field's type", () => {
    expect(normalizeValue({ inputValue: "12.50" }, "number")).toEqual({ kind: "number", value: 12.5 });
    expect(normalizeValue({ inputValue: 12.5 })).toEqual({ kind: "number", value: 12.5 });
    expect(normalizeValue({ date: "2024-05-01T10:00:00Z" })).toEqual({
      kind: "date",
      micros: Date.UTC(2024, 4, 1, 10) * 1000,
    });
    expect(normalizeValue({ inputValue: { radioItemSelected: "EUR" } })).toEqual({ kind: "text", value: "EUR" });
    expect(normalizeValue({ inputValue: "EUR" }, "radio")).toEqual({ kind: "text", value: "EUR" });
    expect(normalizeValue({ inputValue: { itemsChecked: ["b", "a"], itemsNotChecked: ["c"] } })).toEqual({
      kind: "set",
      items: ["a", "b"],
    });
    expect(normalizeValue({ inputValue: "12.50" }, "text")).toEqual({ kind: "text", value: "12.50" });
    expect(normalizeValue({ inputValue: "12.50" })).toEqual({ kind: "text", value: "12.50" });
  });

  it("null, absent, {} and {inputValue: null} all mean no value", () => {
    for (const v of [null, undefined, {}, { inputValue: null }, { date: null }])
      expect(normalizeValue(v)).toEqual({ kind: "none" });
  });

  it("passes unknown shapes through as canonical JSON (key order irrelevant)", () => {
    expect(sameValue({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(sameValue({ a: 1, b: [1, 2] }, { b: [2, 1], a: 1 })).toBe(false);
  });
});

describe("sameValue", () => {
  it("a decimal string equals its number when the type says number or the other side is a number", () => {
    expect(sameValue({ inputValue: "12.50" }, { inputValue: 12.5 }, "number")).toBe(true);
    expect(sameValue({ inputValue: "12.50" }, { inputValue: 12.5 })).toBe(true);
    expect(sameValue({ inputValue: "12.50" }, { inputValue: "12.5" })).toBe(false); // two texts, no type: as written
    expect(sameValue({ inputValue: "12.50" }, { inputValue: "12.5" }, "number")).toBe(true);
    expect(sameValue({ inputValue: "12.51" }, { inputValue: 12.5 }, "number")).toBe(false);
    expect(sameValue({ inputValue: "abc" }, { inputValue: 0 }, "number")).toBe(false);
  });

  it("instants: Z, +00:00, other offsets and microseconds name one time", () => {
    expect(sameValue({ date: "2024-05-01T10:00:00Z" }, { date: "2024-05-01T10:00:00.000000+00:00" })).toBe(true);
    expect(sameValue({ date: "2024-05-01T10:00:00.123Z" }, { date: "2024-05-01T12:00:00.123000+02:00" })).toBe(true);
    expect(sameValue({ date: "2024-05-01T10:00:00.123Z" }, { date: "2024-05-01T10:00:00.123456+00:00" })).toBe(false);
    expect(sameValue({ date: "2024-05-01T10:00:00Z" }, { date: "2024-05-01T10:00:01Z" })).toBe(false);
    expect(sameValue("2024-05-01T10:00:00Z", "2024-05-01T10:00:00+00:00")).toBe(true);
    // a text field holding date-like text is compared as written
    expect(sameValue({ inputValue: "2024-05-01T10:00:00Z" }, { inputValue: "2024-05-01T10:00:00+00:00" }, "text")).toBe(
      false,
    );
  });

  it("radio: {radioItemSelected} and a plain string are one option; checklists are sets", () => {
    expect(sameValue({ inputValue: { radioItemSelected: "A" } }, { inputValue: "A" })).toBe(true);
    expect(sameValue({ inputValue: { radioItemSelected: "A" } }, { inputValue: "B" }, "radio")).toBe(false);
    expect(
      sameValue(
        { inputValue: { itemsChecked: ["MFA", "Expiry set"], itemsNotChecked: ["Least privilege"] } },
        { inputValue: { itemsNotChecked: ["Least privilege"], itemsChecked: ["Expiry set", "MFA"] } },
      ),
    ).toBe(true);
    expect(
      sameValue({ inputValue: { itemsChecked: ["MFA"] } }, { inputValue: { itemsChecked: ["MFA", "Expiry set"] } }),
    ).toBe(false);
  });

  it("no value equals no value only", () => {
    expect(sameValue(null, undefined)).toBe(true);
    expect(sameValue({}, { inputValue: null })).toBe(true);
    expect(sameValue(null, { inputValue: "" })).toBe(false);
    expect(sameValue(null, { inputValue: 0 })).toBe(false);
  });
});

describe("helpers", () => {
  it("reads a field's type from a snapshot action or settings", () => {
    expect(fieldTypeOf("number")).toBe("number");
    expect(fieldTypeOf(undefined, { type: "Radio" })).toBe("radio");
    expect(fieldTypeOf({ label: "x" })).toBeUndefined();
    expect(fieldTypeOf("signature")).toBeUndefined();
  });

  it("canonicalInput turns a number field's decimal string into a number and a radio field's string into its option", () => {
    expect(canonicalInput({ inputValue: "595.54" }, "number")).toEqual({ inputValue: 595.54 });
    expect(canonicalInput({ inputValue: "n/a" }, "number")).toEqual({ inputValue: "n/a" });
    expect(canonicalInput({ inputValue: "595.54" }, undefined)).toEqual({ inputValue: "595.54" });
    expect(canonicalInput({ inputValue: "EUR" }, "radio")).toEqual({ inputValue: { radioItemSelected: "EUR" } });
  });

  it("instantOf refuses what is not a date", () => {
    expect(instantOf("2024-02-30T00:00:00Z")).toBeUndefined();
    expect(instantOf("yesterday")).toBeUndefined();
    expect(instantOf("2024-05-01")).toBe(Date.UTC(2024, 4, 1) * 1000);
  });
});

describe("properties", () => {
  const instant = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2099, 0, 1) });
  const offsetMin = fc.integer({ min: -14 * 4, max: 14 * 4 }).map((q) => q * 15);

  /** The same instant written with an offset and microsecond padding, as Python's isoformat() writes it. */
  function pythonIso(ms: number, offset: number): string {
    const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
    const sign = offset < 0 ? "-" : "+";
    const abs = Math.abs(offset);
    return `${local}000${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  }

  it("any instant equals itself in any offset notation, and differs from any other instant", () => {
    fc.assert(
      fc.property(instant, offsetMin, fc.integer({ min: 1, max: 10_000_000 }), (ms, off, delta) => {
        const z = { date: new Date(ms).toISOString() };
        expect(sameValue(z, { date: pythonIso(ms, off) })).toBe(true);
        expect(sameValue(z, { date: pythonIso(ms + delta, off) })).toBe(false);
        expect(isoOfInstant(instantOf(z.date) ?? 0)).toBe(z.date);
      }),
    );
  });

  it("a number equals its decimal text in a number field, and sameValue is symmetric", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), (cents) => {
        const n = cents / 100;
        const text = n.toFixed(2);
        expect(sameValue({ inputValue: text }, { inputValue: n }, "number")).toBe(true);
        expect(sameValue({ inputValue: n }, { inputValue: text })).toBe(true);
        expect(sameValue({ inputValue: text }, { inputValue: n + 0.01 }, "number")).toBe(false);
      }),
    );
  });

  it("a checklist equals any permutation of itself (with duplicates) and sameValue is symmetric on arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { maxLength: 6 }), fc.infiniteStream(fc.nat()), (items, seeds) => {
        const it = seeds[Symbol.iterator]();
        const shuffled = [...items].sort(() => ((it.next().value as number) % 3) - 1);
        expect(
          sameValue(
            { inputValue: { itemsChecked: items } },
            { inputValue: { itemsChecked: [...shuffled, ...shuffled] } },
          ),
        ).toBe(true);
      }),
    );
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.jsonValue(),
        fc.constantFrom(undefined, "number", "date", "text", "radio", "checklist" as const),
        (a, b, t) => {
          expect(sameValue(a, b, t)).toBe(sameValue(b, a, t));
          expect(sameValue(a, a, t)).toBe(true);
        },
      ),
    );
  });
});
