/**
 * Numbers in typed arrays that grow as they are appended: the one growth rule of the compact tables (the state's
 * index, report entries, planned changes), so none of them holds an object per entry.
 */
export type Column = Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;

/** `a` with room for `need` entries: the same array when it has it, else one `growth` times as long with a copy. */
export function grown<T extends Column>(a: T, need: number, first = 16, growth = 2): T {
  if (need <= a.length) return a;
  const next = new (a.constructor as new (n: number) => T)(Math.max(first, Math.ceil(a.length * growth), need));
  next.set(a);
  return next;
}

/** `a` cut to its first `n` entries, giving back the slack (a copy unless it is already that long). */
export function trimmed<T extends Column>(a: T, n: number): T {
  return n === a.length ? a : (a.slice(0, n) as T);
}

/**
 * A list of numbers appended one at a time (a line's start, an entry's id), read by position. `growth` is how much
 * longer the array gets when full: 2 for a table read once and trimmed, 1.5 for one kept as it grows.
 */
export class NumberColumn<T extends Float64Array | Uint32Array> {
  private count = 0;

  constructor(
    private data: T,
    private readonly growth = 2,
  ) {}

  push(v: number): number {
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
    this.data = new (this.data.constructor as new (n: number) => T)(16);
  }

  get heldBytes(): number {
    return this.data.byteLength;
  }
}
