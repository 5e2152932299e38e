/**
 * The compact tables of the state's index (./state-index.ts): what finds a line, in typed arrays, with no object or
 * string per line. At a million instances a `Map` entry per record (its `id:flags` key, an object of six fields) and per
 * form-field value cost 100–150 bytes each; here a record costs ~20 bytes and a value ~15 (docs/performance.md,
 * "A million instances"). Each table answers exactly as the `Map` it replaces: the same keys, the later `set` of a
 * key replacing its value in place, iteration in the order keys were first set (test/state/index-tables.test.ts, a
 * property test against a plain `Map`). Lookups go through open addressing over an `Int32Array` of positions, so a
 * key is found in O(1) without a string being made; a table only grows while the file is read, and is read-only then.
 */
import { idHash } from "../model/id-set.js";
import { column, copiedAs } from "../model/mapped-buffers.js";
import { grown, trimmed } from "../model/number-column.js";

export { NumberColumn } from "../model/number-column.js";

/**
 * Columns start narrow, as a tenant's values are (ids in 32 bits, a few workflows and skeleton keys), and are made
 * wide once, with what they hold, when a value needs it: 4 or 2 bytes an entry instead of 8 or 4.
 */
function fitsU32(v: number): boolean {
  return v >= 0 && v <= 0xffffffff && Number.isInteger(v);
}

function idsFor(a: Uint32Array | Float64Array, id: number): Uint32Array | Float64Array {
  return a instanceof Uint32Array && !fitsU32(id) ? copiedAs(Float64Array, a) : a;
}

function codesFor(a: Uint16Array | Uint32Array, code: number): Uint16Array | Uint32Array {
  return a instanceof Uint16Array && code > 0xffff ? copiedAs(Uint32Array, a) : a;
}

/**
 * Keys `(id, code)` → their position, in the order first added: ids as doubles (any safe integer), codes small
 * (a dictionary of flags). Positions are found by linear probing in a power-of-two table kept at most three quarters
 * full; ids in 32 bits until one does not fit.
 */
class Positions {
  ids: Uint32Array | Float64Array = new Uint32Array(0);
  codes = new Uint16Array(0);
  count = 0;
  private slots = new Int32Array(16);
  private mask = 15;

  find(id: number, code: number): number {
    let s = idHash(id, code) & this.mask;
    for (;;) {
      const p = this.slots[s] as number;
      if (p === 0) return -1;
      // SameValueZero, as a Map's keys: 0 and -0 are one key (ids are whole numbers; NaN is no id)
      if (this.ids[p - 1] === id && this.codes[p - 1] === code) return p - 1;
      s = (s + 1) & this.mask;
    }
  }

  /** The key's position: the one it has, or a new one at the end. */
  add(id: number, code: number): { at: number; fresh: boolean } {
    const found = this.find(id, code);
    if (found >= 0) return { at: found, fresh: false };
    const at = this.count++;
    this.ids = grown(idsFor(this.ids, id), this.count);
    this.codes = grown(this.codes, this.count);
    this.ids[at] = id;
    this.codes[at] = code;
    if (this.count * 4 > this.slots.length * 3) this.rehash(this.slots.length * 2);
    else this.put(at);
    return { at, fresh: true };
  }

  private put(at: number): void {
    let s = idHash(this.ids[at] as number, this.codes[at] as number) & this.mask;
    while (this.slots[s] !== 0) s = (s + 1) & this.mask;
    this.slots[s] = at + 1;
  }

  private rehash(size: number): void {
    this.slots = column(Int32Array, size);
    this.mask = size - 1;
    for (let at = 0; at < this.count; at++) this.put(at);
  }

  trim(): void {
    this.ids = trimmed(this.ids, this.count);
    this.codes = trimmed(this.codes, this.count);
  }

  get heldBytes(): number {
    return this.ids.byteLength + this.codes.byteLength + this.slots.byteLength;
  }
}

/** Instance id → line: the values of one form field (a `Map<number, number>` that holds no object per entry). */
export class IdLines implements Iterable<[number, number]> {
  private readonly keys_ = new Positions();
  private lines = new Uint32Array(0);

  get size(): number {
    return this.keys_.count;
  }

  set(id: number, line: number): this {
    const { at } = this.keys_.add(id, 0);
    this.lines = grown(this.lines, this.keys_.count);
    this.lines[at] = line;
    return this;
  }

  get(id: number): number | undefined {
    const at = this.keys_.find(id, 0);
    return at < 0 ? undefined : this.lines[at];
  }

  has(id: number): boolean {
    return this.keys_.find(id, 0) >= 0;
  }

  *keys(): IterableIterator<number> {
    for (let i = 0; i < this.keys_.count; i++) yield this.keys_.ids[i] as number;
  }

  *values(): IterableIterator<number> {
    for (let i = 0; i < this.keys_.count; i++) yield this.lines[i] as number;
  }

  *entries(): IterableIterator<[number, number]> {
    for (let i = 0; i < this.keys_.count; i++) yield [this.keys_.ids[i] as number, this.lines[i] as number];
  }

  [Symbol.iterator](): IterableIterator<[number, number]> {
    return this.entries();
  }

  trim(): void {
    this.keys_.trim();
    this.lines = trimmed(this.lines, this.keys_.count);
  }

  get heldBytes(): number {
    return this.keys_.heldBytes + this.lines.byteLength;
  }
}

/** A record of the previous run: what finds it, and its line. */
export interface RecordRef {
  process_id: number;
  flags: string;
  id: number;
  skeleton: string | null;
  line: number;
  // ---- state-cache (write-through) -------------------------------------------------------------------------------
  /** written through (our own write's answer): its last_updated_time as the service wrote it; null for a read */
  written: string | null;
}

/** Small texts (flags, skeleton keys) and workflow ids, each kept once, found by a code. */
class Dictionary<T> {
  readonly items: T[] = [];
  private readonly codes = new Map<T, number>();

  code(item: T): number {
    let c = this.codes.get(item);
    if (c === undefined) {
      c = this.items.length;
      this.items.push(item);
      this.codes.set(item, c);
    }
    return c;
  }

  codeOf(item: T): number {
    return this.codes.get(item) ?? -1;
  }
}

/**
 * Records by `id:flags` (a `Map<string, RecordRef>` that holds no string or object per record): the workflow, skeleton
 * key and flags are codes of small dictionaries, the write instant (rare: our own writes) a sparse map. `get` takes
 * the `Map`'s key; `find` takes its two parts without making it.
 */
export class RecordTable implements Iterable<[string, RecordRef]> {
  private readonly keys_ = new Positions();
  private readonly flagsDict = new Dictionary<string>();
  private readonly pidDict = new Dictionary<number>();
  private readonly skeletonDict = new Dictionary<string>();
  private pids: Uint16Array | Uint32Array = new Uint16Array(0);
  /** skeleton code + 1; 0: none */
  private skeletons: Uint16Array | Uint32Array = new Uint16Array(0);
  private lines = new Uint32Array(0);
  private readonly written = new Map<number, string>();

  get size(): number {
    return this.keys_.count;
  }

  set(key: string, ref: RecordRef): this {
    if (key !== `${ref.id}:${ref.flags}`) throw new Error(`a record is kept by its id:flags, not ${key}`);
    return this.put(ref);
  }

  /** `set` under the record's own key, without making it. */
  put(ref: RecordRef): this {
    if (ref.flags.length > 0xffff || this.flagsDict.items.length > 0xfffe)
      throw new Error("too many kinds of record flags");
    const { at } = this.keys_.add(ref.id, this.flagsDict.code(ref.flags));
    const n = this.keys_.count;
    const pid = this.pidDict.code(ref.process_id);
    const skeleton = ref.skeleton === null ? 0 : this.skeletonDict.code(ref.skeleton) + 1;
    this.pids = grown(codesFor(this.pids, pid), n);
    this.skeletons = grown(codesFor(this.skeletons, skeleton), n);
    this.lines = grown(this.lines, n);
    this.pids[at] = pid;
    this.skeletons[at] = skeleton;
    this.lines[at] = ref.line;
    if (ref.written === null) this.written.delete(at);
    else this.written.set(at, ref.written);
    return this;
  }

  /** The record of this id read with these flags. */
  find(id: number, flags: string): RecordRef | undefined {
    const code = this.flagsDict.codeOf(flags);
    if (code < 0) return undefined;
    const at = this.keys_.find(id, code);
    return at < 0 ? undefined : this.at(at);
  }

  get(key: string): RecordRef | undefined {
    const colon = key.indexOf(":");
    if (colon < 0) return undefined;
    const idText = key.slice(0, colon);
    const id = Number(idText);
    // only the key `${id}:${flags}` would make: the id as it prints
    if (idText === "" || String(id) !== idText) return undefined;
    return this.find(id, key.slice(colon + 1));
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  private at(at: number): RecordRef {
    const skeleton = this.skeletons[at] as number;
    return {
      process_id: this.pidDict.items[this.pids[at] as number] as number,
      flags: this.flagsDict.items[this.keys_.codes[at] as number] as string,
      id: this.keys_.ids[at] as number,
      skeleton: skeleton === 0 ? null : (this.skeletonDict.items[skeleton - 1] as string),
      line: this.lines[at] as number,
      written: this.written.get(at) ?? null,
    };
  }

  *values(): IterableIterator<RecordRef> {
    for (let i = 0; i < this.keys_.count; i++) yield this.at(i);
  }

  /** The records written through (our own writes' answers: few), without an object made for any other. */
  *writtenThrough(): IterableIterator<RecordRef> {
    for (const at of this.written.keys()) yield this.at(at);
  }

  *keys(): IterableIterator<string> {
    for (const r of this.values()) yield `${r.id}:${r.flags}`;
  }

  *entries(): IterableIterator<[string, RecordRef]> {
    for (const r of this.values()) yield [`${r.id}:${r.flags}`, r];
  }

  [Symbol.iterator](): IterableIterator<[string, RecordRef]> {
    return this.entries();
  }

  trim(): void {
    this.keys_.trim();
    const n = this.keys_.count;
    this.pids = trimmed(this.pids, n);
    this.skeletons = trimmed(this.skeletons, n);
    this.lines = trimmed(this.lines, n);
  }

  get heldBytes(): number {
    return this.keys_.heldBytes + this.pids.byteLength + this.skeletons.byteLength + this.lines.byteLength;
  }
}
