/** The typed-array id set answers as a plain `Set<number>` over many random seeds (src/model/id-set.ts). */
import { describe, expect, it } from "vitest";
import { IdSet } from "../../src/model/id-set.js";
import { Prng } from "../../src/sandbox/prng.js";
import { withSmallMappedBuffers } from "../helpers/mapped-sizes.js";

/** An IdSet against a Set over `steps` random adds and reads. */
function asSet(seed: number, steps: number): void {
  const rnd = new Prng(seed);
  const set = new Set<number>();
  const ids = new IdSet();
  // small and large ids, 0, ids at and beyond 32 bits (kept apart from the 32-bit table, whose empty slot is
  // 2 ** 32 - 1), many repeats: collisions and growth
  const pool = rnd.int(10, 5000);
  const edge = [4294967294, 4294967295, 4294967296, Number.MAX_SAFE_INTEGER];
  for (let k = 0; k < steps; k++) {
    const id = rnd.chance(0.02)
      ? (edge[rnd.int(0, edge.length - 1)] as number)
      : rnd.chance(0.1)
        ? rnd.int(0, 3) * 4294967296 + rnd.int(0, pool)
        : rnd.int(0, pool);
    if (rnd.chance(0.5)) expect(ids.add(id)).toBe(!set.has(id));
    else expect(ids.has(id)).toBe(set.has(id));
    set.add(id);
    ids.add(id);
    expect(ids.size).toBe(set.size);
  }
}

describe("IdSet", () => {
  const seeds = Array.from({ length: 20 }, (_, i) => i + 1);
  it.each(seeds)("seed %i: the same answers as a Set", (seed) => asSet(seed, 20_000));

  // sets that grow across the edges of their mapped buffers (test/helpers/mapped-sizes.ts)
  it.each(seeds.slice(0, 10))("seed %i, small mapped buffers: the same answers", (seed) =>
    withSmallMappedBuffers(seed, () => asSet(seed, 2500)),
  );

  it("refuses what is no id", () => {
    expect(() => new IdSet().add(1.5)).toThrow(RangeError);
  });
});
