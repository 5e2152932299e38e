/**
 * A set of instance ids in typed arrays: open addressing over a `Float64Array` (any safe integer), kept at most half
 * full, ~16 bytes an id where a `Set<number>` takes 20–40 (docs/performance.md, "Memory"). It answers `has`/`add`
 * exactly as a `Set<number>` of whole numbers does (test/model/id-set.test.ts).
 */

/**
 * Hash of a whole number (both 32-bit halves count) and an optional small code: the one hash of the typed-array id
 * tables (here, src/state/index-tables.ts, src/state/id-bits.ts).
 */
export function idHash(id: number, code = -1): number {
  const lo = id >>> 0;
  const hi = Math.floor(id / 4294967296) >>> 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b) ^ Math.imul(code + 1, 0xc2b2ae35), 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 13)) >>> 0;
}

export class IdSet {
  private slots = new Float64Array(16).fill(Number.NaN);
  private mask = 15;
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(id: number): boolean {
    let s = idHash(id) & this.mask;
    for (;;) {
      const v = this.slots[s] as number;
      if (v !== v) return false; // an empty slot (NaN)
      if (v === id) return true;
      s = (s + 1) & this.mask;
    }
  }

  /** Adds the id; false when it was there already. */
  add(id: number): boolean {
    if (!Number.isSafeInteger(id)) throw new RangeError(`not an instance id: ${id}`);
    let s = idHash(id) & this.mask;
    for (;;) {
      const v = this.slots[s] as number;
      if (v !== v) break;
      if (v === id) return false;
      s = (s + 1) & this.mask;
    }
    this.slots[s] = id;
    this.count += 1;
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    return true;
  }

  private rehash(size: number): void {
    const old = this.slots;
    this.slots = new Float64Array(size).fill(Number.NaN);
    this.mask = size - 1;
    for (const v of old) {
      if (v !== v) continue;
      let s = idHash(v) & this.mask;
      while (!Number.isNaN(this.slots[s] as number)) s = (s + 1) & this.mask;
      this.slots[s] = v;
    }
  }
}
