/**
 * Numbers in typed arrays that grow as they are appended: the one growth rule of the compact tables (the state's
 * index, report entries, planned changes), so none of them holds an object per entry.
 */
import { capacity, copiedAs, widened, type Column, type ColumnOf } from "./mapped-buffers.js";

export type { Column } from "./mapped-buffers.js";

/**
 * `a` with room for `need` entries: the same array when it has it; else one `growth` times as long, over the same
 * memory when its mapped buffer has the room (src/model/mapped-buffers.ts), or a new array with a copy.
 */
export function grown<T extends Column>(a: T, need: number, first = 16, growth = 2): T {
  if (need <= a.length) return a;
  const n = Math.max(first, Math.ceil(a.length * growth), need);
  const room = capacity(a);
  if (need <= room) return widened(a, Math.min(n, room));
  return copiedAs(a.constructor as ColumnOf<T>, a, n);
}

/**
 * `a` cut to its first `n` entries (those written: none past them ever was), giving back the slack: a copy unless it
 * is already that long, or the same memory when it is on a mapped buffer (whose unwritten pages hold nothing).
 */
export function trimmed<T extends Column>(a: T, n: number): T {
  if (n >= a.length) return a;
  if (capacity(a) > a.length) return widened(a, n);
  return copiedAs(a.constructor as ColumnOf<T>, a.subarray(0, n));
}

/**
 * A list of numbers appended one at a time (a line's start, an entry's id), read by position. `growth` is how much
 * longer the array gets when full: 2 for a table read once and trimmed, 1.5 for one kept as it grows. A list of
 * doubles (given a `Float64Array`) keeps its numbers in 32 bits while every one is a whole number that fits (ids,
 * offsets in a file under 4 GB: half the bytes), and is made wide once, with what it holds, when one does not.
 */
export class NumberColumn<T extends Float64Array | Uint32Array> {
  private count = 0;
  private data: Float64Array | Uint32Array;
  private readonly doubles: boolean;

  constructor(
    data: T,
    private readonly growth = 2,
  ) {
    this.doubles = data instanceof Float64Array;
    this.data = this.doubles ? new Uint32Array(data.length) : data;
  }

  push(v: number): number {
    // -0 and NaN too are kept as doubles: they read back as put
    if (this.doubles && this.data instanceof Uint32Array && (v >>> 0 !== v || Object.is(v, -0))) this.widen();
    this.data = grown(this.data, this.count + 1, 16, this.growth);
    this.data[this.count] = v;
    return this.count++;
  }

  at(i: number): number {
    return this.data[i] as number;
  }

  get length(): number {
    return this.count;
  }

  /** Gives back the slack once nothing more is appended. */
  trim(): void {
    this.data = trimmed(this.data, this.count);
  }

  /** Empties the list and lets its array go. */
  clear(): void {
    this.count = 0;
    // narrow again: a list of doubles starts in 32 bits
    this.data = new Uint32Array(16);
  }

  get heldBytes(): number {
    return this.data.byteLength;
  }

  private widen(): void {
    this.data = copiedAs(Float64Array, this.data.subarray(0, this.count), Math.max(16, this.count));
  }
}
