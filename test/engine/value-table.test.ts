/**
 * The almanac's compact field-value table answers as the `Map` of value objects it replaced, over many random seeds
 * (src/engine/value-table.ts): sets, overwrites, deletes (which move ids within the table), growth, shared values
 * released; dates kept as times and read back as the same text.
 */
import { describe, expect, it } from "vitest";
import { ABSENT, ValueTable } from "../../src/engine/value-table.js";
import { Prng } from "../../src/sandbox/prng.js";
import { withSmallMappedBuffers } from "../helpers/mapped-sizes.js";

function someValue(rnd: Prng): unknown {
  switch (rnd.int(0, 8)) {
    case 0:
      return undefined;
    case 1:
      return null;
    case 2:
      return { inputValue: rnd.int(-1000, 1000) / 100 };
    case 3:
      // beside whole hundredths: -0, numbers too large for 32-bit hundredths or with a finer part, not numbers
      return { inputValue: [-0, 1e300, 21474836.48, -21474836.49, 0.1 + 0.2, 1 / 3, Number.NaN][rnd.int(0, 6)] };
    case 4:
      return { radioItemSelected: ["EUR", "USD", "GBP"][rnd.int(0, 2)] };
    case 5:
      return { inputValue: `text ${rnd.int(0, 50)}` };
    case 6:
      return { itemsChecked: ["a", "b"].slice(0, rnd.int(0, 2)), itemsNotChecked: [] };
    case 7:
      return { inputValue: rnd.int(0, 5), other: true };
    default:
      return rnd.chance(0.8)
        ? { date: new Date(rnd.int(0, 1e12)).toISOString() }
        : { date: ["2026-06-15", "2026-06-15T12:00:00Z", "+010000-01-01T00:00:00.000Z"][rnd.int(0, 2)] };
  }
}

/** A table against a Map over `steps` random sets, deletes and reads. */
function asMap(seed: number, steps: number): void {
  const rnd = new Prng(seed);
  const map = new Map<number, unknown>();
  const table = new ValueTable();
  const pool = rnd.int(10, 3000);
  for (let k = 0; k < steps; k++) {
    // ids beyond 32 bits and at its edge (2**32-1 is the largest kept in the table), negative ones
    const id = rnd.chance(0.1)
      ? rnd.int(0, 3) * 4294967296 + rnd.int(0, pool)
      : rnd.chance(0.05)
        ? ([4294967294, 4294967295, 4294967296, -3, 0][rnd.int(0, 4)] as number)
        : rnd.int(0, pool);
    const op = rnd.int(0, 9);
    if (op < 4) {
      const v = someValue(rnd);
      map.set(id, v ?? ABSENT);
      table.set(id, v);
    } else if (op < 7) {
      expect(table.delete(id)).toBe(map.delete(id));
    } else {
      expect(table.has(id)).toBe(map.has(id));
      expect(table.get(id)).toEqual(map.get(id));
    }
    expect(table.size).toBe(map.size);
  }
  for (const [id, v] of map) expect(table.get(id)).toEqual(v);
  expect(new Set(table.keys())).toEqual(new Set(map.keys()));
  // every id gone: no shared value is held any more
  for (const id of map.keys()) table.delete(id);
  expect(table.size).toBe(0);
  expect(table.heldValues()).toBe(0);
  expect(table.heldDoubles()).toBe(0);
}

describe("ValueTable", () => {
  const seeds = Array.from({ length: 20 }, (_, i) => i + 1);
  it.each(seeds)("seed %i: the same answers as a Map of values", (seed) => asMap(seed, 8000));

  // tables that grow and shrink across the edges of their mapped buffers (test/helpers/mapped-sizes.ts)
  it.each(seeds.slice(0, 10))("seed %i, small mapped buffers: the same answers", (seed) =>
    withSmallMappedBuffers(seed, () => asMap(seed, 1500)),
  );

  it("keeps whole hundredths in the table and gives its room back as it empties", () => {
    const t = new ValueTable();
    for (let id = 0; id < 100000; id++) t.set(id, { inputValue: (id % 5000) / 100 });
    expect(t.heldDoubles()).toBe(0);
    expect(t.get(4321)).toEqual({ inputValue: 43.21 });
    // 9 bytes a slot, at most three quarters full
    expect(t.heldBytes).toBeLessThanOrEqual(262144 * 9);
    for (let id = 0; id < 99990; id++) t.delete(id);
    expect(t.size).toBe(10);
    expect(t.heldBytes).toBeLessThan(1000);
    expect(t.get(99995)).toEqual({ inputValue: 49.95 });
  });

  it("keeps a number input's sign and refuses what is no id", () => {
    const t = new ValueTable();
    t.set(1, { inputValue: -0 });
    expect(Object.is((t.get(1) as { inputValue: number }).inputValue, -0)).toBe(true);
    expect(t.get(2)).toBeUndefined();
    expect(() => t.set(1.5, null)).toThrow(RangeError);
  });
});
