/**
 * A set of instance ids in typed arrays: open addressing over a `Uint32Array` (ids beyond 32 bits, never seen in a
 * tenant, in a plain `Set` beside it), kept at most half full, ~8 bytes an id where a `Set<number>` takes 20–40 (docs/performance.md, "Memory"). It answers `has`/`add`
 * exactly as a `Set<number>` of whole numbers does (test/model/id-set.test.ts).
 */

import { column } from "./mapped-buffers.js";

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

/** The empty slot of a table of 32-bit ids; this id and any id beyond 32 bits are kept apart, in a plain Set. */
const EMPTY = 0xffffffff;

export class IdSet {
  // instance ids fit 32 bits in every tenant we know: 4 bytes a slot; the rare other one goes to `far`
  private slots = new Uint32Array(16).fill(EMPTY);
  private mask = 15;
  private count = 0;
  private far: Set<number> | undefined;

  get size(): number {
    return this.count + (this.far?.size ?? 0);
  }

  has(id: number): boolean {
    if (!(id >= 0 && id < EMPTY)) return this.far?.has(id) === true;
    let s = idHash(id) & this.mask;
    for (;;) {
      const v = this.slots[s] as number;
      if (v === EMPTY) return false;
      if (v === id) return true;
      s = (s + 1) & this.mask;
    }
  }

  /** Adds the id; false when it was there already. */
  add(id: number): boolean {
    if (!Number.isSafeInteger(id)) throw new RangeError(`not an instance id: ${id}`);
    if (!(id >= 0 && id < EMPTY)) {
      this.far ??= new Set();
      if (this.far.has(id)) return false;
      this.far.add(id);
      return true;
    }
    let s = idHash(id) & this.mask;
    for (;;) {
      const v = this.slots[s] as number;
      if (v === EMPTY) break;
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
    this.slots = column(Uint32Array, size).fill(EMPTY);
    this.mask = size - 1;
    for (const v of old) {
      if (v === EMPTY) continue;
      let s = idHash(v) & this.mask;
      while (this.slots[s] !== EMPTY) s = (s + 1) & this.mask;
      this.slots[s] = v;
    }
  }
}
