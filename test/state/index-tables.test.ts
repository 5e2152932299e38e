/**
 * The state index's compact tables (src/state/index-tables.ts) answer as the plain `Map`s they replace: over random
 * sequences of sets (many repeated keys, ids near each other and far apart, up to the largest safe integer), the same
 * size, the same answer for every key asked (present or not), the same entries in the same order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IdLines, NumberColumn, RecordTable, type RecordRef } from "../../src/state/index-tables.js";
import { IdBits, RecordsWritten } from "../../src/state/id-bits.js";
import { RecordHeadSchema, recordHead } from "../../src/state/schema.js";
import { withSmallMappedBuffers } from "../helpers/mapped-sizes.js";

/** Seeds of the runs with small mapped-buffer sizes (test/helpers/mapped-sizes.ts): tables cross their edges. */
const SMALL_SEEDS = Array.from({ length: 12 }, (_, i) => i + 1);

/** Ids as a tenant has them (a dense run), plus far ones: both 32-bit halves matter to the hash. */
const id = fc.oneof(
  fc.integer({ min: 100_001, max: 100_400 }),
  fc.integer({ min: 0, max: 2 ** 31 }),
  fc.constantFrom(0, 1, 2 ** 32 - 2, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 53 - 1, Number.MAX_SAFE_INTEGER - 4096),
  fc.maxSafeNat(),
);
const line = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const flags = fc.constantFrom("", "v", "t", "vt", "x:y");

/** IdLines against a Map over random sets (fast-check's `seed`, `numRuns` of them). */
function idLinesAsMap(seed: number, numRuns: number): void {
  fc.assert(
    fc.property(fc.array(fc.tuple(id, line), { maxLength: 600 }), fc.array(id, { maxLength: 50 }), (sets, asks) => {
      const table = new IdLines();
      const map = new Map<number, number>();
      for (const [k, v] of sets) {
        table.set(k, v);
        map.set(k, v);
      }
      table.trim();
      expect(table.size).toBe(map.size);
      expect([...table]).toEqual([...map]);
      expect([...table.keys()]).toEqual([...map.keys()]);
      expect([...table.values()]).toEqual([...map.values()]);
      for (const k of [...asks, ...sets.map(([k]) => k)]) {
        expect(table.get(k)).toBe(map.get(k));
        expect(table.has(k)).toBe(map.has(k));
      }
    }),
    { numRuns, seed },
  );
}

describe("IdLines answers as a Map<number, number>", () => {
  it("over random sets, many seeds", () => idLinesAsMap(46, 300));

  it.each(SMALL_SEEDS)("seed %i, small mapped buffers: the same answers", (seed) =>
    withSmallMappedBuffers(seed, () => idLinesAsMap(seed, 20)),
  );

  it("grows past its first sizes and finds every key after (a tenant's worth of values)", () => {
    const table = new IdLines();
    const map = new Map<number, number>();
    for (let i = 0; i < 200_000; i++) {
      const k = 100_001 + ((i * 7919) % 150_000);
      table.set(k, i);
      map.set(k, i);
    }
    table.trim();
    expect(table.size).toBe(map.size);
    const wrong = [...map].filter(([k, v]) => table.get(k) !== v);
    expect(wrong).toEqual([]);
    expect(table.get(99)).toBeUndefined();
    // no object per entry: a few typed arrays
    expect(table.heldBytes).toBeLessThan(map.size * 40);
  });
});

const ref = fc.record({
  process_id: fc.constantFrom(1042, 1043, 1044, 1045, 2 ** 40),
  flags,
  id,
  skeleton: fc.option(fc.constantFrom("a1", "b2", "c3"), { nil: null }),
  line,
  written: fc.option(fc.constantFrom("2026-06-15T12:00:00.000Z", "2026-06-15T12:00:00.001Z"), { nil: null }),
});

/** RecordTable against a Map over random sets. */
function recordTableAsMap(seed: number, numRuns: number): void {
  fc.assert(
    fc.property(
      fc.array(ref, { maxLength: 400 }),
      fc.array(fc.tuple(id, flags), { maxLength: 50 }),
      fc.array(fc.string(), { maxLength: 10 }),
      (refs, asks, oddKeys) => {
        const table = new RecordTable();
        const map = new Map<string, RecordRef>();
        for (const r of refs) {
          const key = `${r.id}:${r.flags}`;
          table.set(key, r);
          map.set(key, r);
        }
        table.trim();
        expect(table.size).toBe(map.size);
        expect([...table]).toEqual([...map]);
        expect([...table.values()]).toEqual([...map.values()]);
        expect([...table.keys()]).toEqual([...map.keys()]);
        for (const [i, f] of [...asks, ...refs.map((r): [number, string] => [r.id, r.flags])]) {
          expect(table.get(`${i}:${f}`)).toEqual(map.get(`${i}:${f}`));
          expect(table.find(i, f)).toEqual(map.get(`${i}:${f}`));
          expect(table.has(`${i}:${f}`)).toBe(map.has(`${i}:${f}`));
        }
        // keys the Map would never have been given: not found either
        for (const k of [...oddKeys, ...refs.map((r) => `0${r.id}:${r.flags}`), ...refs.map((r) => `${r.id}.0`)])
          expect(table.get(k)).toEqual(map.get(k));
      },
    ),
    { numRuns, seed },
  );
}

describe("RecordTable answers as a Map<string, RecordRef>", () => {
  it("over random sets, many seeds; get by the Map's key and find by its parts", () => recordTableAsMap(46, 300));

  it.each(SMALL_SEEDS)("seed %i, small mapped buffers: the same answers", (seed) =>
    withSmallMappedBuffers(seed, () => recordTableAsMap(seed, 20)),
  );

  it("widens its narrow columns mid-way (ids past 32 bits, more than 65,535 workflows or skeleton keys)", () => {
    const table = new RecordTable();
    const map = new Map<string, RecordRef>();
    const put = (r: RecordRef): void => {
      table.put(r);
      map.set(`${r.id}:${r.flags}`, r);
    };
    for (let i = 0; i < 66_000; i++)
      put({ process_id: 5000 + i, flags: "v", id: 100_001 + i, skeleton: `s${i}`, line: i, written: null });
    put({ process_id: 1, flags: "", id: 2 ** 40 + 3, skeleton: "s0", line: 7, written: null });
    for (let i = 0; i < 100; i++)
      put({ process_id: 5000 + i, flags: "vt", id: 100_001 + i, skeleton: null, line: 2 * i, written: null });
    table.trim();
    expect(table.size).toBe(map.size);
    expect(JSON.stringify([...table])).toBe(JSON.stringify([...map]));
    const wrong = [...map].filter(([k, r]) => JSON.stringify(table.find(r.id, r.flags)) !== JSON.stringify(map.get(k)));
    expect(wrong).toEqual([]);
    // ids, workflow and skeleton codes narrow while they fit: 14 bytes a record and its slots (3/8 to 3/4 full)
    const narrow = new RecordTable();
    for (let i = 0; i < 100_000; i++)
      narrow.put({ process_id: 1042, flags: "v", id: 100_001 + i, skeleton: "a", line: i, written: null });
    narrow.trim();
    expect(narrow.heldBytes).toBeLessThan(100_000 * 25);
  });

  it("refuses a key that is not the record's own", () => {
    const table = new RecordTable();
    expect(() =>
      table.set("1:v", { process_id: 1, flags: "vt", id: 1, skeleton: null, line: 0, written: null }),
    ).toThrow(/id:flags/);
  });
});

describe("NumberColumn", () => {
  it("keeps what is pushed, in order, doubles and whole numbers to 2^32", () => {
    fc.assert(
      fc.property(fc.array(fc.maxSafeNat(), { maxLength: 3000 }), (xs) => {
        const starts = new NumberColumn(new Float64Array(0));
        xs.forEach((x, i) => expect(starts.push(x)).toBe(i));
        starts.trim();
        expect(starts.length).toBe(xs.length);
        expect(Array.from({ length: xs.length }, (_, i) => starts.at(i))).toEqual(xs);
        // 4 bytes a number while every one fits 32 bits, 8 once one does not
        expect(starts.heldBytes).toBe((xs.every((x) => x <= 0xffffffff) ? 4 : 8) * xs.length);
      }),
      { numRuns: 50, seed: 46 },
    );
  });
});

describe("the reader's plain check of a record line (recordHead)", () => {
  const anything = fc.oneof(
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constant(null),
    fc.boolean(),
    fc.constant(2 ** 60),
    fc.dictionary(fc.string(), fc.integer()),
  );
  // mostly the right shape, sometimes anything at each level: both sides of the check are tried
  const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | unknown> =>
    fc.oneof({ arbitrary: a, weight: 10 }, { arbitrary: anything, weight: 1 });
  const line = fc.record(
    {
      record: maybe(
        fc.record(
          {
            process_id: maybe(fc.integer()),
            flags: maybe(fc.constantFrom("", "v", "vt")),
            written: maybe(fc.constant(true)),
            compact: maybe(
              fc.record(
                {
                  record: maybe(fc.record({ id: maybe(fc.maxSafeNat()), last_updated_time: anything })),
                  skeleton: maybe(fc.option(fc.string(), { nil: null })),
                },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    { requiredKeys: [] },
  );

  it("passes only what RecordHeadSchema passes, with the same values (many seeds)", () => {
    let passed = 0;
    fc.assert(
      fc.property(line, (raw) => {
        const plain = recordHead(raw);
        const parsed = RecordHeadSchema.safeParse(raw);
        if (!plain) return;
        passed++;
        expect(parsed.success).toBe(true);
        const r = parsed.data?.record;
        expect(plain).toEqual({
          process_id: r?.process_id,
          flags: r?.flags,
          written: r?.written === true,
          id: r?.compact.record.id,
          last_updated_time: r?.compact.record.last_updated_time,
          skeleton: r?.compact.skeleton,
        });
      }),
      { numRuns: 3000, seed: 46 },
    );
    // the property was not vacuous
    expect(passed).toBeGreaterThan(300);
  });
});

/** IdBits and RecordsWritten against a Map and a Set over random marks. */
function idBitsAsMap(seed: number | undefined, numRuns: number): void {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(id, fc.integer({ min: 1, max: 3 })), { maxLength: 2_000 }),
      fc.array(fc.tuple(id, flags), { maxLength: 300 }),
      fc.array(id, { maxLength: 50 }),
      (marks, records, asks) => {
        const bits = new IdBits();
        const written = new RecordsWritten(bits);
        const map = new Map<number, number>();
        const keys = new Set<string>();
        for (const [k, m] of marks) {
          const fresh = ((map.get(k) ?? 0) & m) !== m;
          expect(bits.mark(k, m)).toBe(fresh);
          map.set(k, (map.get(k) ?? 0) | m);
        }
        for (const [k, f] of records) {
          written.add(k, f);
          keys.add(`${k}:${f}`);
        }
        for (const k of [...asks, ...marks.map(([k]) => k)]) expect(bits.get(k) & 3).toBe(map.get(k) ?? 0);
        for (const [k, f] of [...records, ...asks.map((k) => [k, "v"] as const)])
          expect(written.has(k, f)).toBe(keys.has(`${k}:${f}`));
        const ours = new Map([...bits.entries()].filter(([, m]) => (m & 3) !== 0).map(([k, m]) => [k, m & 3]));
        expect(new Map([...ours].sort(([a], [b]) => a - b))).toEqual(new Map([...map].sort(([a], [b]) => a - b)));
      },
    ),
    { numRuns, ...(seed === undefined ? {} : { seed }) },
  );
}

describe("IdBits and RecordsWritten answer as a Map of marks and a Set of id:flags keys", () => {
  it("over random marks (past the table's first growth), many seeds", () => idBitsAsMap(undefined, 200));

  it.each(SMALL_SEEDS)("seed %i, small mapped buffers: the same answers", (seed) =>
    withSmallMappedBuffers(seed, () => idBitsAsMap(seed, 15)),
  );
});
