/**
 * A listing kept whole for the run (./run-queries.ts), in typed arrays rather than one object and two strings per
 * element: ids in a `Float64Array`, status and whether a `public_url` is there in a byte, names and URLs as UTF-8 in
 * one growing byte buffer. The parts many elements share are kept once, in a small dictionary of the table: a URL up
 * to its last "/" (the service's origin and path), and a name's text before the element's own id when the name holds
 * it ("Expense claim #" of "Expense claim #123456 — Lena Tanaka"; the id's digits are made again from the id). An
 * element costs the rest of its text plus ~21 bytes where an object with its own name and URL strings cost ~200
 * (names with a "—" are two bytes a character as strings); elements are made again, a chunk at a time, as the engine
 * evaluates them (docs/performance.md, "A million instances"). Each made element equals the one put in, key for key
 * (test/engine/item-table.test.ts).
 */
import type { InstanceListItem } from "../api/index.js";
import { grown, trimmed } from "../model/number-column.js";

const STATUS = ["running", "completed", "aborted"] as const;
const STATUS_CODE: Record<string, number> = { running: 0, completed: 1, aborted: 2 };
/** the URL's kind, in bits 2–3 of an element's flag byte: absent, null, a string */
const URL_NONE = 0;
const URL_NULL = 4;
const URL_TEXT = 8;
/** bit 4: the name is its dictionary part, the id's digits, then its text */
const NAME_ID = 16;
/** the most parts a table keeps in its dictionary; later new ones stay in the elements' text */
const MAX_PARTS = 1024;
/** a part of a name before the id longer than this is not one many elements share */
const MAX_NAME_PART = 120;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class ItemTable implements Iterable<InstanceListItem> {
  private idCol = new Float64Array(64);
  private flags = new Uint8Array(64);
  /** per element, where its name ends and where its URL ends in `text` (the name starts where the last URL ended) */
  private ends = new Uint32Array(128);
  /** per element, the dictionary code + 1 of its name's part and of its URL's part; 0: none */
  private parts = new Uint16Array(128);
  private text = new Uint8Array(4096);
  private readonly partTexts: string[] = [];
  private readonly partCodes = new Map<string, number>();
  private used = 0;
  private n = 0;

  get length(): number {
    return this.n;
  }

  /** The id of the element at `at`. */
  id(at: number): number {
    return this.idCol[at] as number;
  }

  push(item: InstanceListItem): void {
    if (this.n >= this.idCol.length) this.grow();
    const at = this.n;
    this.idCol[at] = item.id;
    const url = item.public_url;
    let flags = (STATUS_CODE[item.status] ?? 0) | (url === undefined ? URL_NONE : url === null ? URL_NULL : URL_TEXT);
    const name = item.name;
    const digits = String(item.id);
    const idAt = name.indexOf(digits);
    const namePart = idAt >= 0 && idAt <= MAX_NAME_PART ? this.part(name.slice(0, idAt)) : 0;
    if (namePart > 0) {
      flags |= NAME_ID;
      this.write(name.slice(idAt + digits.length));
    } else this.write(name);
    this.parts[2 * at] = namePart;
    this.flags[at] = flags;
    this.ends[2 * at] = this.used;
    let urlPart = 0;
    if (typeof url === "string") {
      const slash = url.lastIndexOf("/") + 1;
      urlPart = slash > 0 ? this.part(url.slice(0, slash)) : 0;
      this.write(urlPart > 0 ? url.slice(slash) : url);
    }
    this.parts[2 * at + 1] = urlPart;
    this.ends[2 * at + 1] = this.used;
    this.n += 1;
  }

  /** The element at `at`, made again: `{id, name, status, public_url?}` as it was put in. */
  at(at: number): InstanceListItem {
    const start = at === 0 ? 0 : (this.ends[2 * at - 1] as number);
    const nameEnd = this.ends[2 * at] as number;
    const f = this.flags[at] as number;
    const kind = f & 12;
    const id = this.idCol[at] as number;
    const rest = decoder.decode(this.text.subarray(start, nameEnd));
    const item: InstanceListItem = {
      id,
      name: (f & NAME_ID) !== 0 ? `${this.partTexts[(this.parts[2 * at] as number) - 1] as string}${id}${rest}` : rest,
      status: STATUS[f & 3] ?? "running",
    };
    if (kind === URL_NULL) item.public_url = null;
    else if (kind === URL_TEXT) {
      const urlPart = this.parts[2 * at + 1] as number;
      const tail = decoder.decode(this.text.subarray(nameEnd, this.ends[2 * at + 1] as number));
      item.public_url = urlPart > 0 ? `${this.partTexts[urlPart - 1] as string}${tail}` : tail;
    }
    return item;
  }

  /** The elements from `start` up to `end` (not included), as `Array.prototype.slice` gives them. */
  slice(start: number, end = this.n): InstanceListItem[] {
    const out: InstanceListItem[] = [];
    for (let at = Math.max(0, start); at < Math.min(end, this.n); at++) out.push(this.at(at));
    return out;
  }

  /** Every id, in order. */
  ids(): number[] {
    return Array.from(this.idCol.subarray(0, this.n));
  }

  /** The elements that pass, in order, in a table of their own. */
  where(keep: (item: InstanceListItem) => boolean): ItemTable {
    const out = new ItemTable();
    for (let at = 0; at < this.n; at++) {
      const item = this.at(at);
      if (keep(item)) out.push(item);
    }
    return out.sealed();
  }

  /** This table with no room to grow: once complete, it is held for the run at its size, not up to twice that. */
  sealed(): this {
    this.idCol = trimmed(this.idCol, this.n);
    this.flags = trimmed(this.flags, this.n);
    this.ends = trimmed(this.ends, 2 * this.n);
    this.parts = trimmed(this.parts, 2 * this.n);
    this.text = trimmed(this.text, this.used);
    return this;
  }

  *[Symbol.iterator](): Iterator<InstanceListItem> {
    for (let at = 0; at < this.n; at++) yield this.at(at);
  }

  /** The dictionary code + 1 of a shared part, or 0 when the dictionary is full. */
  private part(text: string): number {
    let code = this.partCodes.get(text);
    if (code === undefined) {
      if (this.partTexts.length >= MAX_PARTS) return 0;
      code = this.partTexts.length;
      this.partTexts.push(text);
      this.partCodes.set(text, code);
    }
    return code + 1;
  }

  private write(s: string): void {
    // a UTF-8 character is at most 3 bytes a UTF-16 unit
    const need = this.used + s.length * 3;
    this.text = grown(this.text, need, 4096);
    this.used += encoder.encodeInto(s, this.text.subarray(this.used)).written;
  }

  private grow(): void {
    // each column twice as long (on its mapped buffer's memory when it has the room: src/model/mapped-buffers.ts)
    this.idCol = grown(this.idCol, this.n + 1, 64);
    this.flags = grown(this.flags, this.idCol.length, 64);
    this.ends = grown(this.ends, 2 * this.idCol.length, 128);
    this.parts = grown(this.parts, 2 * this.idCol.length, 128);
  }
}
