/**
 * One field's values by instance id, in typed arrays instead of a `Map` of value objects (docs/performance.md,
 * "Memory", "A million instances"): open addressing over the ids (the hash of src/model/id-set.ts), 9 bytes a slot
 * kept up to three quarters full: a 32-bit id, a kind byte and 4 bytes of value. A number input (`{inputValue: n}`,
 * the most common value) whose hundredths are a whole 32-bit number (a count, an amount in cents) is kept as those;
 * any other number and a date's time (`{date}`) as a double in a side column; any other value as its JSON text, once
 * per distinct text (a radio choice, a checklist) and counted, so a text no instance holds any more goes. Ids beyond
 * 32 bits (which no tenant has) are kept apart in a `Map`. The table shrinks as its ids are deleted. `get` answers as
 * the `Map` did: an equal value, rebuilt (`ABSENT` for "read, and no value"; test/engine/value-table.test.ts).
 */
import { idHash } from "../model/id-set.js";
import { column } from "../model/mapped-buffers.js";
import { grown } from "../model/number-column.js";

/** Marks "read, and the field holds no value" as distinct from "not read yet". */
export const ABSENT: unique symbol = Symbol("absent");

const EMPTY = 0;
const NONE = 1;
/** a number input n with n * 100 a whole 32-bit number k: kept as k, read back as k / 100 (checked exact) */
const CENTS = 2;
/** any other number input: its double in `wide` */
const NUMBER = 3;
/** a date: its time in `wide` */
const DATE = 4;
const TEXT = 5;

/** A value as kept: its kind and its 32-bit word (hundredths, or the index of a double or of a text). */
interface Far {
  kind: number;
  word: number;
}

export class ValueTable {
  private ids = new Uint32Array(16);
  /** 0 for an empty slot */
  private kinds = new Uint8Array(16);
  private words = new Int32Array(16);
  private mask = 15;
  private count = 0;
  /** ids that do not fit 32 bits (or are negative) */
  private far: Map<number, Far> | undefined;
  /** doubles of the NUMBER and DATE kinds, by index; freed indexes are used again */
  private wide = new Float64Array(0);
  private wideUsed = 0;
  private readonly wideFree: number[] = [];
  private readonly texts: string[] = [];
  private readonly uses: number[] = [];
  private readonly byText = new Map<string, number>();
  private readonly free: number[] = [];

  get size(): number {
    return this.count + (this.far?.size ?? 0);
  }

  private slotOf(id: number): number {
    let s = idHash(id) & this.mask;
    while (this.kinds[s] !== EMPTY && this.ids[s] !== id) s = (s + 1) & this.mask;
    return s;
  }

  has(id: number): boolean {
    if (!fits(id)) return this.far?.has(id) === true;
    return this.kinds[this.slotOf(id)] !== EMPTY;
  }

  get(id: number): unknown {
    if (!fits(id)) {
      const f = this.far?.get(id);
      return f === undefined ? undefined : this.value(f.kind, f.word);
    }
    const s = this.slotOf(id);
    const kind = this.kinds[s] as number;
    return kind === EMPTY ? undefined : this.value(kind, this.words[s] as number);
  }

  /** Stores the value (`ABSENT`, undefined or null: no value). */
  set(id: number, value: unknown): void {
    if (!Number.isSafeInteger(id)) throw new RangeError(`not an instance id: ${id}`);
    if (!fits(id)) {
      this.far ??= new Map();
      const had = this.far.get(id);
      if (had) this.release(had.kind, had.word);
      this.far.set(id, this.encode(value));
      return;
    }
    let s = this.slotOf(id);
    if (this.kinds[s] !== EMPTY) this.release(this.kinds[s] as number, this.words[s] as number);
    else {
      if ((this.count + 1) * 4 > this.ids.length * 3) {
        this.rehash(this.ids.length * 2);
        s = this.slotOf(id);
      }
      this.ids[s] = id;
      this.count += 1;
    }
    const { kind, word } = this.encode(value);
    this.kinds[s] = kind;
    this.words[s] = word;
  }

  delete(id: number): boolean {
    if (!fits(id)) {
      const had = this.far?.get(id);
      if (had === undefined) return false;
      this.release(had.kind, had.word);
      this.far?.delete(id);
      return true;
    }
    let s = this.slotOf(id);
    if (this.kinds[s] === EMPTY) return false;
    this.release(this.kinds[s] as number, this.words[s] as number);
    this.count -= 1;
    // backward-shift deletion: every later id of the run moves up where its probe would find it
    for (let next = (s + 1) & this.mask; this.kinds[next] !== EMPTY; next = (next + 1) & this.mask) {
      const home = idHash(this.ids[next] as number) & this.mask;
      // the id at `next` may fill the hole at `s` only when its home is not cyclically within (s, next]
      if (s <= next ? home > s && home <= next : home > s || home <= next) continue;
      this.ids[s] = this.ids[next] as number;
      this.kinds[s] = this.kinds[next] as number;
      this.words[s] = this.words[next] as number;
      s = next;
    }
    this.kinds[s] = EMPTY;
    // a field's values are deleted as rules evaluate: the table gives its room back as it empties
    if (this.ids.length > 16 && this.count * 8 < this.ids.length) this.rehash(this.ids.length / 2);
    return true;
  }

  /** distinct texts held now (each once, whatever number of instances holds it) */
  heldValues(): number {
    return this.byText.size;
  }

  /** doubles held now (numbers that are not whole hundredths, and dates) */
  heldDoubles(): number {
    return this.wideUsed - this.wideFree.length;
  }

  *keys(): IterableIterator<number> {
    for (let s = 0; s < this.ids.length; s++) if (this.kinds[s] !== EMPTY) yield this.ids[s] as number;
    if (this.far) yield* this.far.keys();
  }

  /** The typed arrays' bytes (docs/performance.md, "A million instances"). */
  get heldBytes(): number {
    return this.ids.byteLength + this.kinds.byteLength + this.words.byteLength + this.wide.byteLength;
  }

  private value(kind: number, word: number): unknown {
    if (kind === NONE) return ABSENT;
    if (kind === CENTS) return { inputValue: word / 100 };
    if (kind === NUMBER) return { inputValue: this.wide[word] };
    if (kind === DATE) return { date: new Date(this.wide[word] as number).toISOString() };
    return JSON.parse(this.texts[word] as string) as unknown;
  }

  private encode(value: unknown): Far {
    if (value === ABSENT || value === undefined || value === null) return { kind: NONE, word: 0 };
    const n = numberInput(value);
    if (n !== undefined) {
      const k = Math.round(n * 100);
      // exact both ways, and not -0 (k / 100 is +0 for k = 0)
      if (k >= -2147483648 && k <= 2147483647 && k / 100 === n && !Object.is(n, -0)) return { kind: CENTS, word: k };
      return { kind: NUMBER, word: this.double(n) };
    }
    const time = dateInput(value);
    if (time !== undefined) return { kind: DATE, word: this.double(time) };
    return { kind: TEXT, word: this.keep(JSON.stringify(value)) };
  }

  private double(x: number): number {
    let at = this.wideFree.pop();
    if (at === undefined) {
      at = this.wideUsed++;
      this.wide = grown(this.wide, at + 1);
    }
    this.wide[at] = x;
    return at;
  }

  private keep(text: string): number {
    let at = this.byText.get(text);
    if (at === undefined) {
      at = this.free.pop() ?? this.texts.length;
      this.texts[at] = text;
      this.uses[at] = 0;
      this.byText.set(text, at);
    }
    this.uses[at] = (this.uses[at] ?? 0) + 1;
    return at;
  }

  private release(kind: number, word: number): void {
    if (kind === NUMBER || kind === DATE) {
      this.wideFree.push(word);
      if (this.wideFree.length === this.wideUsed) {
        // no double held any more: the column goes
        this.wideFree.length = 0;
        this.wideUsed = 0;
        this.wide = new Float64Array(0);
      }
      return;
    }
    if (kind !== TEXT) return;
    const left = (this.uses[word] ?? 1) - 1;
    this.uses[word] = left;
    if (left > 0) return;
    this.byText.delete(this.texts[word] as string);
    this.texts[word] = "";
    this.free.push(word);
  }

  private rehash(size: number): void {
    const { ids, kinds, words } = this;
    // large tables on mapped buffers, which go back to the system when the table outgrows them or goes
    this.ids = column(Uint32Array, size);
    this.kinds = column(Uint8Array, size);
    this.words = column(Int32Array, size);
    this.mask = size - 1;
    for (let i = 0; i < ids.length; i++) {
      const kind = kinds[i] as number;
      if (kind === EMPTY) continue;
      const s = this.slotOf(ids[i] as number);
      this.ids[s] = ids[i] as number;
      this.kinds[s] = kind;
      this.words[s] = words[i] as number;
    }
  }
}

/** Whether an id goes in the 32-bit table (else in `far`). */
function fits(id: number): boolean {
  return id >= 0 && id <= 0xffffffff && Number.isInteger(id);
}

/** The one key of a plain object with exactly one, and its value. */
function only(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return undefined;
  let found = false;
  for (const k in value) {
    if (k !== key) return undefined;
    found = true;
  }
  return found ? (value as Record<string, unknown>)[key] : undefined;
}

/** The number of a `{inputValue: n}` value and nothing else, or undefined. */
function numberInput(value: unknown): number | undefined {
  const n = only(value, "inputValue");
  return typeof n === "number" ? n : undefined;
}

/** The time of a `{date}` value whose text is the one `toISOString` writes back, or undefined. */
function dateInput(value: unknown): number | undefined {
  const d = only(value, "date");
  if (typeof d !== "string" || d.length !== 24) return undefined;
  const t = Date.parse(d);
  return Number.isFinite(t) && new Date(t).toISOString() === d ? t : undefined;
}
