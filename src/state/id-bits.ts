/**
 * What a run with state notes per instance (./client.ts), in typed arrays: per id a byte of marks — answered from the
 * state, read again, and which records of it were written into the next state (by their read flags). A `Set` of ids
 * per mark and a `Set` of `id:flags` strings for the records cost 40–100 bytes an instance at a million instances;
 * here an id costs 5 bytes (a 32-bit id and its byte; an id beyond 32 bits, which no tenant has, in a `Map` beside) in a
 * table kept at most three quarters full (docs/performance.md, "A million instances").
 */
import { idHash } from "../model/id-set.js";
import { column } from "../model/mapped-buffers.js";

/** Ids (any safe integer) → a byte of marks; an id with no mark is not held. */
export class IdBits {
  // ids that fit 32 bits (every tenant's): 5 bytes a slot; any other id (beyond 32 bits) in `far`
  private ids = new Uint32Array(1024);
  private marks = new Uint8Array(1024);
  private mask = 1023;
  private count = 0;
  private far: Map<number, number> | undefined;

  /** Distinct ids marked. */
  get size(): number {
    return this.count + (this.far?.size ?? 0);
  }

  private slot(id: number): number {
    let s = idHash(id) & this.mask;
    while (this.marks[s] !== 0 && this.ids[s] !== id) s = (s + 1) & this.mask;
    return s;
  }

  /** The marks of an id (0: none). */
  get(id: number): number {
    if (!fits(id)) return this.far?.get(id) ?? 0;
    const s = this.slot(id);
    return this.marks[s] === 0 ? 0 : (this.marks[s] as number);
  }

  /** Adds marks (a nonzero byte) to an id; whether any of them is new. */
  mark(id: number, bits: number): boolean {
    if (!fits(id)) {
      this.far ??= new Map();
      const had = this.far.get(id) ?? 0;
      if ((had & bits) === bits) return false;
      this.far.set(id, had | bits);
      return true;
    }
    let s = this.slot(id);
    const had = this.marks[s] as number;
    if ((had & bits) === bits) return false;
    if (had === 0) {
      if ((this.count + 1) * 4 > this.ids.length * 3) {
        this.grow();
        s = this.slot(id);
      }
      this.count++;
      this.ids[s] = id;
    }
    this.marks[s] = had | bits;
    return true;
  }

  private grow(): void {
    const ids = this.ids;
    const marks = this.marks;
    this.ids = column(Uint32Array, ids.length * 2);
    this.marks = column(Uint8Array, ids.length * 2);
    this.mask = this.ids.length - 1;
    for (let i = 0; i < ids.length; i++) {
      const m = marks[i] as number;
      if (m === 0) continue;
      const s = this.slot(ids[i] as number);
      this.ids[s] = ids[i] as number;
      this.marks[s] = m;
    }
  }

  /** Ids with their marks, in no particular order. */
  *entries(): IterableIterator<[number, number]> {
    for (let i = 0; i < this.ids.length; i++) {
      const m = this.marks[i] as number;
      if (m !== 0) yield [this.ids[i] as number, m];
    }
    if (this.far) yield* this.far.entries();
  }

  get heldBytes(): number {
    return this.ids.byteLength + this.marks.byteLength;
  }
}

/** Whether an id goes in the 32-bit table (else in `far`). */
function fits(id: number): boolean {
  return id >= 0 && id <= 0xffffffff && Number.isInteger(id);
}

/** The marks of a run's instances (./client.ts). */
export const FROM_STATE = 1;
export const READ_AGAIN = 2;
/** Record read flags a run writes ("", "v", "t", "vt": run.ts flagsOf), each a mark of its own. */
const RECORD_MARKS = new Map<string, number>([
  ["", 4],
  ["v", 8],
  ["t", 16],
  ["vt", 32],
]);

/**
 * The records written into the next state this run, by id and read flags (a `Set` of `id:flags` that holds no string
 * per record); flags other than the four a run reads with are kept by their key.
 */
export class RecordsWritten {
  private readonly other = new Set<string>();

  constructor(private readonly bits: IdBits) {}

  has(id: number, flags: string): boolean {
    const m = RECORD_MARKS.get(flags);
    return m === undefined ? this.other.has(`${id}:${flags}`) : (this.bits.get(id) & m) !== 0;
  }

  add(id: number, flags: string): void {
    const m = RECORD_MARKS.get(flags);
    if (m === undefined) this.other.add(`${id}:${flags}`);
    else this.bits.mark(id, m);
  }
}
