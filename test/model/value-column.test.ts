/**
 * The value column (src/model/value-column.ts) and the report entries kept in it (src/actions/report-entries.ts): a
 * compact form is never the truth, so over many random values every one comes back as it was put (`Object.is`, or
 * the same object), and a report built from the compact entries equals the one built from the entries as objects.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValueColumn } from "../../src/model/value-column.js";
import { NumberColumn } from "../../src/model/number-column.js";
import { report, ReportEntries, type ReportEntry } from "../../src/actions/index.js";
import type { ReportAction } from "../../src/actions/report.js";
import { withSmallMappedBuffers } from "../helpers/mapped-sizes.js";

/** Texts a report row meets and texts that look like them but are not what they seem. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: "binary" }),
  // lone surrogates, halves of a pair in the wrong order: UTF-8 cannot carry these
  fc.constantFrom("\uD800", "a\uDC00b", "\uDC00\uD800", "😀", "Expense claim #1 — Vera Jensen", ""),
  // instants: the ISO form of their time, and near misses (another form of the same time, an impossible date)
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc
    .date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
    .map((d) => d.toISOString().replace(".000Z", "Z")),
  fc.constantFrom(
    "2026-02-30T00:00:00.000Z",
    "2026-06-15T12:00:00.000+00:00",
    "2026-06-15T12:00:00.000z",
    "2026-06-15t12:00:00.000Z",
    "+275760-09-13T00:00:00.000Z",
    "2026-06-15T24:00:00.000Z",
    "0000-01-01T00:00:00.000Z",
  ),
  // instants of whole seconds (kept as 32-bit seconds from 1970), before 1970 and past 2106 (kept as doubles)
  fc.integer({ min: -3e10, max: 2 ** 32 + 1e6 }).map((sec) => new Date(sec * 1000).toISOString()),
  // names with a part before their first digit that many share (kept once), or too short or long to be one
  fc
    .tuple(
      fc.constantFrom("Purchase request #", "Expense claim #", "é—😀 #", "abc", "", "x".repeat(130)),
      fc.nat(),
      fc.string({ unit: "grapheme", maxLength: 20 }),
    )
    .map(([part, n, rest]) => `${part}${n}${rest}`),
  // long texts: their length's varint takes 2 or 3 bytes
  fc.string({ unit: "grapheme", minLength: 30, maxLength: 6000 }),
);
const value = fc.oneof(
  text,
  fc.double(),
  fc.integer(),
  // amounts in cents (kept as 32-bit hundredths) and numbers at the edges of the 32-bit words
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((k) => k / 100),
  fc.constantFrom(21474836.47, 21474836.48, -21474836.48, -21474836.49, 2 ** 32 - 1, 2 ** 32, -1, 0.1 + 0.2),
  fc.constantFrom(
    0,
    -0,
    Number.NaN,
    Infinity,
    -Infinity,
    Number.MAX_SAFE_INTEGER,
    5e-324,
    null,
    true,
    false,
    undefined,
  ),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.double())),
);

function same(got: unknown, put: unknown): boolean {
  return Object.is(got, put);
}

/** A column of random values (fast-check's `seed`, `numRuns` lists) gives each back as it was put. */
function valuesBack(seed: number, numRuns: number, maxLength: number): void {
  fc.assert(
    fc.property(fc.array(value, { maxLength }), (values) => {
      const column = new ValueColumn();
      for (const [i, v] of values.entries()) expect(column.push(v)).toBe(i);
      expect(column.length).toBe(values.length);
      for (const [i, v] of values.entries()) expect(same(column.at(i), v)).toBe(true);
      expect(column.at(values.length)).toBeUndefined();
      expect(column.at(-1)).toBeUndefined();
    }),
    { numRuns, seed },
  );
}

describe("ValueColumn", () => {
  it("gives back every value as it was put, over many random lists", () => valuesBack(46, 300, 300));

  // kinds, numbers and text bytes across the edges of their mapped buffers (test/helpers/mapped-sizes.ts)
  it.each(Array.from({ length: 10 }, (_, i) => i + 1))("seed %i, small mapped buffers: every value back", (seed) =>
    withSmallMappedBuffers(seed, () => valuesBack(seed, 15, 1500)),
  );

  it("keeps the first 1,024 shared parts once and any later one in its texts, each text back as it was", () => {
    const column = new ValueColumn();
    // 1,100 distinct parts before the first digit ("Kind bq #"), used in turn
    const letters = (n: number): string =>
      (n < 26 ? "" : letters(Math.floor(n / 26) - 1)) + String.fromCharCode(97 + (n % 26));
    const texts = Array.from(
      { length: 3000 },
      (_, i) => `Kind ${letters((i * 7) % 1100)} #${i} — ${"é".repeat(i % 5)}`,
    );
    for (const t of texts) column.push(t);
    expect(Array.from({ length: texts.length }, (_, i) => column.at(i))).toEqual(texts);
  });

  it("a report's names cost their own part: the part they share is kept once", () => {
    const column = new ValueColumn();
    for (let i = 0; i < 10_000; i++) column.push(`Purchase request #${100_000 + i} — Dmitri Kowalski`);
    // 5 bytes a value and ~25 of its own text, not the 44 of the whole name
    expect(column.heldBytes / 10_000).toBeLessThan(40);
    expect(column.at(9_999)).toBe("Purchase request #109999 — Dmitri Kowalski");
  });

  it("keeps a text's bytes, an instant's time and a number, not their objects", () => {
    const column = new ValueColumn();
    const name = "Expense claim #100008 — Vera Jensen";
    for (let i = 0; i < 10_000; i++) {
      column.push(`${name} ${i}`);
      column.push(new Date(1_780_000_000_000 + i * 7919).toISOString());
      column.push(i / 7);
    }
    // 9 bytes a value and the texts' UTF-8 bytes, grown by half: far below the ~150 bytes of their JS values
    expect(column.heldBytes / 10_000).toBeLessThan(140);
    expect(column.at(3 * 9_999)).toBe(`${name} 9999`);
    expect(column.at(3 * 9_999 + 1)).toBe(new Date(1_780_000_000_000 + 9_999 * 7919).toISOString());
    expect(column.at(3 * 9_999 + 2)).toBe(9_999 / 7);
  });
});

describe("NumberColumn", () => {
  it("holds what a number[] holds", () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 2 ** 32 - 1 }), { maxLength: 200 }), (ns) => {
        const list = new NumberColumn(new Uint32Array(0), 1.5);
        const doubles = new NumberColumn(new Float64Array(1));
        for (const n of ns) {
          list.push(n);
          doubles.push(-n / 3);
        }
        expect(Array.from({ length: list.length }, (_, i) => list.at(i))).toEqual(ns);
        expect(Array.from({ length: doubles.length }, (_, i) => doubles.at(i))).toEqual(ns.map((n) => -n / 3));
      }),
      { numRuns: 100, seed: 47 },
    );
  });
});

/** The entries as objects: what a report held before they were kept compactly. */
function builtFromObjects(action: ReportAction, entries: readonly ReportEntry[]): unknown {
  const groups = new Map<string, number[]>();
  for (const e of entries)
    for (const k of e.keys) {
      const ids = groups.get(k);
      if (ids) ids.push(e.instance_id);
      else groups.set(k, [e.instance_id]);
    }
  return {
    rule: "r",
    title: action.title ?? "r",
    group_by: action.group_by,
    columns: action.columns,
    groups: [...groups.entries()]
      .map(([key, ids]) => ({ key, count: ids.length, instance_ids: ids.sort((a, b) => a - b) }))
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    rows: entries
      .map((e, i) => [e, i] as const)
      .sort(([a, i], [b, j]) => a.instance_id - b.instance_id || i - j)
      .map(([e]) => e.row),
  };
}

describe("ReportEntries", () => {
  const columns = ["id", "name", "deadline", "fields.amount", "__proto__"];
  const entry: fc.Arbitrary<ReportEntry> = fc
    .record({
      instance_id: fc.integer({ min: 1, max: 60 }),
      keys: fc.array(fc.constantFrom("expenses", "urgent", "(no tag)", "Regular", '{"a":1}'), {
        minLength: 1,
        maxLength: 3,
      }),
      cols: fc.subarray(columns, { minLength: 1 }),
      values: fc.array(value, { minLength: columns.length, maxLength: columns.length }),
    })
    .map(({ instance_id, keys, cols, values }) => {
      const row: Record<string, unknown> = {};
      cols.forEach((c, i) =>
        Object.defineProperty(row, c, { value: values[i], enumerable: true, writable: true, configurable: true }),
      );
      return { instance_id, keys, row };
    });

  it("gives back each entry as it was added, and builds the report the entries as objects build", () => {
    const action: ReportAction = {
      kind: "report",
      group_by: "tags",
      columns,
      pos: { line: 1, col: 1 },
    } as ReportAction;
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 120 }), (entries) => {
        const kept = ReportEntries.of(entries);
        expect(kept.size).toBe(entries.length);
        for (const [i, e] of entries.entries()) {
          const back = kept.entryAt(i);
          expect(back.instance_id).toBe(e.instance_id);
          expect(back.keys).toEqual(e.keys);
          expect(Object.keys(back.row)).toEqual(Object.keys(e.row));
          for (const k of Object.keys(e.row)) expect(same(back.row[k], e.row[k])).toBe(true);
        }
        const built = report.build({ name: "r", fields: {} }, action, kept);
        const expected = builtFromObjects(action, entries);
        // rows compared value by value (NaN, -0 and undefined as themselves), the rest as the plan shows it
        expect({ ...built, rows: undefined }).toEqual({ ...(expected as object), rows: undefined });
        const rows = (expected as { rows: Array<Record<string, unknown>> }).rows;
        expect(built.rows.length).toBe(rows.length);
        rows.forEach((row, i) => {
          const got = built.rows[i] ?? {};
          expect(Object.keys(got)).toEqual(Object.keys(row));
          for (const k of Object.keys(row)) expect(same(got[k], row[k])).toBe(true);
        });
        expect(JSON.stringify(built.rows)).toBe(JSON.stringify(rows));
      }),
      { numRuns: 200, seed: 48 },
    );
  });
});
