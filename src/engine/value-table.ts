/**
 * One field's values by instance id, in typed arrays instead of a `Map` of value objects (docs/performance.md,
 * "Memory"): open addressing over the ids (the hash of src/model/id-set.ts), a number input (`{inputValue: n}`, the
 * most common value) kept as the number, a date (`{date}`) as its time, any other value as its JSON text, once per
 * distinct text (a radio choice, a checklist) and counted, so a text no instance holds any more goes. `get` answers
 * as the `Map` did: an equal value, rebuilt (`ABSENT` for "read, and no value"; test/engine/value-table.test.ts).
 */
import { idHash } from "../model/id-set.js";

/** Marks "read, and the field holds no value" as distinct from "not read yet". */
export const ABSENT: unique symbol = Symbol("absent");

const EMPTY = 0;
const NONE = 1;
const NUMBER = 2;
const DATE = 3;
const TEXT = 4;

export class ValueTable {
  private ids = new Float64Array(16).fill(Number.NaN);
  private kinds = new Uint8Array(16);
  /** the number of a number input, the time of a date, or the index of a text */
  private nums = new Float64Array(16);
  private mask = 15;
  private count = 0;
  private readonly texts: string[] = [];
  private readonly uses: number[] = [];
  private readonly byText = new Map<string, number>();
  private readonly free: number[] = [];

  get size(): number {
    return this.count;
  }

  private slotOf(id: number): number {
    let s = idHash(id) & this.mask;
    for (;;) {
      const v = this.ids[s] as number;
      if (v !== v || v === id) return s;
      s = (s + 1) & this.mask;
    }
  }

  has(id: number): boolean {
    return this.ids[this.slotOf(id)] === id;
  }

  get(id: number): unknown {
    const s = this.slotOf(id);
    if (this.ids[s] !== id) return undefined;
    const kind = this.kinds[s];
    if (kind === NONE) return ABSENT;
    if (kind === NUMBER) return { inputValue: this.nums[s] };
    if (kind === DATE) return { date: new Date(this.nums[s] as number).toISOString() };
    return JSON.parse(this.texts[this.nums[s] as number] as string) as unknown;
  }

  /** Stores the value (`ABSENT`, undefined or null: no value). */
  set(id: number, value: unknown): void {
    if (!Number.isSafeInteger(id)) throw new RangeError(`not an instance id: ${id}`);
    let s = this.slotOf(id);
    if (this.ids[s] === id) this.release(s);
    else {
      this.ids[s] = id;
      this.count += 1;
      if (this.count * 2 > this.ids.length) {
        this.rehash(this.ids.length * 2);
        s = this.slotOf(id);
      }
    }
    if (value === ABSENT || value === undefined || value === null) {
      this.kinds[s] = NONE;
      return;
    }
    const n = numberInput(value);
    if (n !== undefined) {
      this.kinds[s] = NUMBER;
      this.nums[s] = n;
      return;
    }
    const time = dateInput(value);
    if (time !== undefined) {
      this.kinds[s] = DATE;
      this.nums[s] = time;
      return;
    }
    this.kinds[s] = TEXT;
    this.nums[s] = this.keep(JSON.stringify(value));
  }

  delete(id: number): boolean {
    let s = this.slotOf(id);
    if (this.ids[s] !== id) return false;
    this.release(s);
    this.count -= 1;
    // backward-shift deletion: every later id of the run moves up where its probe would find it
    for (let next = (s + 1) & this.mask; ; next = (next + 1) & this.mask) {
      const v = this.ids[next] as number;
      if (v !== v) break;
      const home = idHash(v) & this.mask;
      // the id at `next` may fill the hole at `s` only when its home is not cyclically within (s, next]
      if (s <= next ? home > s && home <= next : home > s || home <= next) continue;
      this.ids[s] = v;
      this.kinds[s] = this.kinds[next] as number;
      this.nums[s] = this.nums[next] as number;
      s = next;
    }
    this.ids[s] = Number.NaN;
    this.kinds[s] = EMPTY;
    return true;
  }

  /** distinct texts held now (each once, whatever number of instances holds it) */
  heldValues(): number {
    return this.byText.size;
  }

  *keys(): IterableIterator<number> {
    for (const v of this.ids) if (v === v) yield v;
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

  private release(s: number): void {
    if (this.kinds[s] !== TEXT) return;
    const at = this.nums[s] as number;
    const left = (this.uses[at] ?? 1) - 1;
    this.uses[at] = left;
    if (left > 0) return;
    this.byText.delete(this.texts[at] as string);
    this.texts[at] = "";
    this.free.push(at);
  }

  private rehash(size: number): void {
    const { ids, kinds, nums } = this;
    this.ids = new Float64Array(size).fill(Number.NaN);
    this.kinds = new Uint8Array(size);
    this.nums = new Float64Array(size);
    this.mask = size - 1;
    for (let i = 0; i < ids.length; i++) {
      const v = ids[i] as number;
      if (v !== v) continue;
      const s = this.slotOf(v);
      this.ids[s] = v;
      this.kinds[s] = kinds[i] as number;
      this.nums[s] = nums[i] as number;
    }
  }
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
