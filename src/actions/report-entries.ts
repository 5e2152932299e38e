/**
 * The report entries of one action, held compactly while a run goes. A report keeps a row per matched instance until
 * the plan is written; as one entry object, one keys array and one row object each (with their key strings), that is
 * ~170 bytes an instance before its values. Here an entry is its id, the index of its group keys (each distinct list
 * of keys kept once), the index of its row's keys (each distinct list kept once) and where its values start, in typed
 * arrays (20 bytes), and its values in a value column (src/model/value-column.ts: 9 bytes a value, a text's UTF-8
 * bytes beside): ~95 bytes an entry of a report of id, name, deadline and an amount, where JS arrays of the values
 * held ~230 (docs/performance.md, "A million instances"). Kind-neutral: a report kind still decides what an entry
 * holds (`entry()`); `build()` reads the entries back from here and the plan's rows are made from them as they are
 * written (src/plan/lazy-rows.ts).
 */
import { ValueColumn } from "../model/value-column.js";
import { NumberColumn } from "../model/number-column.js";
import type { FoldedSearch } from "../text/folded-search.js";

/** Every character an instant's ISO text (Date#toISOString) may hold, folded as FoldedSearch folds. */
const INSTANT_CHARS = /^[0-9+\-:.tz]*$/;
/** Where a shared part of a text ends (src/model/value-column.ts): at its first digit. */
const FIRST_DIGIT = /[0-9]/;

/** Whether some string of `v` (a value or an object's key, at any depth) holds the needle. */
function deepHolds(v: unknown, search: FoldedSearch): boolean {
  if (typeof v === "string") return search.textHolds(v);
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) return v.some((x) => deepHolds(x, search));
  return Object.entries(v).some(([k, x]) => search.textHolds(k) || deepHolds(x, search));
}

/** One matched instance as a report sees it: the group keys it counts under and its row. */
export interface ReportEntry {
  instance_id: number;
  keys: string[];
  row: Record<string, unknown>;
}

export class ReportEntries {
  private readonly ids = new NumberColumn(new Float64Array(16), 1.5);
  /** per entry: its index in keyLists */
  private readonly keyOf = new NumberColumn(new Uint32Array(16), 1.5);
  private readonly keyLists: string[][] = [];
  private readonly keyIndex = new Map<string, number>();
  /** per entry: its index in shapes (the row's keys, in order) */
  private readonly shapeOf = new NumberColumn(new Uint32Array(16), 1.5);
  private readonly shapes: string[][] = [];
  private readonly shapeIndex = new Map<string, number>();
  /** per entry: where its values start in `values` */
  private readonly at = new NumberColumn(new Uint32Array(16), 1.5);
  private readonly values = new ValueColumn();

  static of(entries: Iterable<ReportEntry>): ReportEntries {
    const out = new ReportEntries();
    for (const e of entries) out.add(e);
    return out;
  }

  get size(): number {
    return this.ids.length;
  }

  add(entry: ReportEntry): void {
    this.ids.push(entry.instance_id);
    this.keyOf.push(intern(entry.keys, this.keyLists, this.keyIndex));
    const keys = Object.keys(entry.row);
    this.shapeOf.push(intern(keys, this.shapes, this.shapeIndex));
    this.at.push(this.values.length);
    for (const k of keys) this.values.push(entry.row[k]);
  }

  /** The instance of the `i`th entry. */
  idAt(i: number): number {
    return i >= 0 && i < this.ids.length ? this.ids.at(i) : 0;
  }

  /** The group keys of the `i`th entry (shared between entries: not to be changed). */
  keysAt(i: number): readonly string[] {
    if (i < 0 || i >= this.ids.length) return [];
    return this.keyLists[this.keyOf.at(i)] ?? [];
  }

  /** The row of the `i`th entry, made anew. */
  rowAt(i: number): Record<string, unknown> {
    const row: Record<string, unknown> = {};
    if (i < 0 || i >= this.ids.length) return row;
    const keys = this.shapes[this.shapeOf.at(i)] ?? [];
    const start = this.at.at(i);
    keys.forEach((k, n) => {
      const value = this.values.at(start + n);
      // "__proto__" stays an own key, as the entry's row held it (an assignment would set the prototype)
      if (k === "__proto__")
        Object.defineProperty(row, k, { value, enumerable: true, writable: true, configurable: true });
      else row[k] = value;
    });
    return row;
  }

  /**
   * False when no string of any row (a value or a column's name) holds `search`'s needle in any case, searched in
   * the bytes the texts are held in (src/text/folded-search.ts); true when one may.
   */
  mayHold(search: FoldedSearch): boolean {
    if (this.shapes.some((keys) => keys.some((k) => search.textHolds(k)))) return true;
    // an instant is given back as its ISO text: only a needle of its characters can be in one
    if (INSTANT_CHARS.test(search.folded) && this.values.holdsInstants()) return true;
    if (this.values.keptValues().some((v) => deepHolds(v, search))) return true;
    // a text is its shared part (no digit in it), then its own bytes from its first digit on: the needle in the part,
    // in the bytes, or across the two — then its part before its first digit ends the part
    const parts = this.values.sharedParts();
    if (parts.some((p) => search.textHolds(p))) return true;
    const head = FIRST_DIGIT.exec(search.folded)?.index ?? 0;
    if (head > 0 && parts.some((p) => search.endsWithStart(p, head))) return true;
    return search.bytesHold([this.values.textBytes()]);
  }

  entryAt(i: number): ReportEntry {
    return { instance_id: this.idAt(i), keys: [...this.keysAt(i)], row: this.rowAt(i) };
  }

  *[Symbol.iterator](): Generator<ReportEntry> {
    for (let i = 0; i < this.ids.length; i++) yield this.entryAt(i);
  }
}

/**
 * Lists remembered for sharing: a report grouped by a value nearly every instance has its own of (a name) would only
 * add a map entry per instance, so past this many distinct lists a new one is kept without being remembered.
 */
const MAX_SHARED = 10_000;

/** The index of `list` in `lists`, added when new: a list of keys is kept once however many entries share it. */
function intern(list: readonly string[], lists: string[][], index: Map<string, number>): number {
  // one key (the usual case) as itself, other lists as JSON; the first letter keeps the two kinds of name apart
  const name = list.length === 1 ? `k${list[0] ?? ""}` : `l${JSON.stringify(list)}`;
  const known = index.get(name);
  if (known !== undefined) return known;
  lists.push([...list]);
  if (index.size < MAX_SHARED) index.set(name, lists.length - 1);
  return lists.length - 1;
}
