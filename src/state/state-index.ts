/**
 * What an open state file is known by (./reader.ts builds it, reading and checking every line once): where each line
 * is, a digest per block of lines and what finds each line, never what it says; and the lines read again when a run
 * uses them, with their blocks, given only when their block's digest still matches.
 */
import type { FileHandle } from "node:fs/promises";
import { IdLines, NumberColumn, RecordTable } from "./index-tables.js";
import { Digests } from "./mac.js";
import type { ListingHead, Marks, StateHeader } from "./schema.js";

/** A listing of the previous run: its question, and per page the lines of its elements. */
export interface ListingRef {
  process_id: number;
  query: ListingHead["query"];
  run_at: string;
  complete: boolean;
  pages: Array<{ count: number | null; lines: Uint32Array }>;
}

export type { RecordRef } from "./index-tables.js";

/** Reads that many bytes of the file at most in one go; a longer line is read on its own. */
const SPAN = 4 * 1024 * 1024;
/** Lines closer than this are read together (one read of the bytes between is cheaper than two reads). */
const GAP = 64 * 1024;
/**
 * A few lines asked alone (a record, a field value: one call each, many at once) are read with the bytes after them,
 * this much, and the next ones asked in that span are taken from it: a run asks them in about the order the last run
 * wrote them, so one read and one buffer serve a dozen lines instead of one each (docs/performance.md, "A million
 * instances"). The last few such spans are kept, read or being read.
 */
const AHEAD = 32 * 1024;
const SPANS_KEPT = 16;

export class StateIndex {
  /** listings by `process_id:query`: the last one written with that question */
  readonly listings = new Map<string, ListingRef>();
  /** records by `id:flags` (./index-tables.ts: typed arrays, no object per record) */
  readonly records = new RecordTable();
  /** `process:step:action` → instance id → its value's line */
  readonly fields = new Map<string, IdLines>();
  readonly skeletons = new Map<string, unknown>();
  /** instances a bulk abort of ours returned (state-cache: write-through) */
  readonly aborted = new Set<number>();
  header!: StateHeader;
  marks: Marks = {};
  /** whether the MAC verified with the key given (undefined: no key given, not checked) */
  authentic: boolean | undefined;
  /** the file ends at a checkpoint: the run that wrote it was stopped or killed while it read */
  checkpointed = false;
  /** with `IndexOptions.elementIds` (`state show`): the ids of each listing's elements, in the order of its lines */
  elementIds: Map<ListingRef, number[]> | undefined;
  /** per line its first byte, and its length (a line is at most 72 MiB) */
  private readonly starts = new NumberColumn(new Float64Array(0));
  private readonly lengths = new NumberColumn(new Uint32Array(0));
  /** the blocks the lines are read again in (./reader.ts, BLOCK_BYTES): per block its range, in file order, and digest */
  private readonly blockStarts = new NumberColumn(new Float64Array(0));
  private readonly blockLengths = new NumberColumn(new Uint32Array(0));
  private readonly digests = new Digests();
  /** lines read again that were not the verified ones (edited after the file was opened): not used */
  private changed = 0;
  /** told once, when a line read again is not the one verified */
  onChanged: (() => void) | undefined;
  /** spans read ahead for lines asked alone: their first byte and their bytes (being read, or read) */
  private readonly ahead: Array<{ from: number; bytes: Promise<Buffer> }> = [];

  constructor(private readonly fh: FileHandle) {}

  /** Remembers a line's byte range; its number finds it again. Its bytes are those of the block that holds it. */
  place(start: number, end: number): number {
    this.starts.push(start);
    this.lengths.push(end - start);
    return this.starts.length - 1;
  }

  /**
   * Remembers a block of the file as verified, [start, end) and its bytes: lines placed in it are read again with it
   * and used only while its digest matches. Blocks come in file order and do not overlap.
   */
  block(start: number, end: number, bytes: Uint8Array): void {
    this.blockStarts.push(start);
    this.blockLengths.push(end - start);
    this.digests.add(bytes);
  }

  /** Bytes the index holds for its blocks' digests, for the memory figures. */
  get digestBytes(): number {
    return this.digests.heldBytes;
  }

  /** Bytes of the typed arrays of the index: lines, records, form-field values (for the memory figures). */
  get heldBytes(): number {
    let n =
      this.digests.heldBytes +
      this.starts.heldBytes +
      this.lengths.heldBytes +
      this.blockStarts.heldBytes +
      this.blockLengths.heldBytes +
      this.records.heldBytes;
    for (const f of this.fields.values()) n += f.heldBytes;
    for (const l of this.listings.values()) for (const p of l.pages) n += p.lines.byteLength;
    return n;
  }

  /** Lines placed (kept for reading again). */
  get lineCount(): number {
    return this.starts.length;
  }

  /** Once every line is placed. */
  sealed(): void {
    this.digests.trim();
    this.starts.trim();
    this.lengths.trim();
    this.blockStarts.trim();
    this.blockLengths.trim();
    this.records.trim();
    for (const f of this.fields.values()) f.trim();
  }

  private startOf(line: number): number {
    return this.starts.at(line);
  }

  private endOf(line: number): number {
    return this.starts.at(line) + this.lengths.at(line);
  }

  private unverified(): string {
    if (this.changed++ === 0) this.onChanged?.();
    return "";
  }

  /** The block that holds this line whole, or -1. */
  private blockOf(line: number): number {
    if (line < 0 || line >= this.starts.length) return -1;
    const start = this.startOf(line);
    let lo = 0;
    let hi = this.blockStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.blockStarts.at(mid) <= start) lo = mid;
      else hi = mid - 1;
    }
    if (hi < 0 || this.blockStarts.at(lo) > start) return -1;
    return this.endOf(line) <= this.blockStarts.at(lo) + this.blockLengths.at(lo) ? lo : -1;
  }

  /**
   * The text of these lines, in the order asked: each read with its block, blocks near each other in one go, and
   * given only when its block's digest still matches.
   */
  async lines(refs: ArrayLike<number>): Promise<string[]> {
    const blocks = Array.from({ length: refs.length }, (_, i) => this.blockOf(refs[i] as number));
    const order = Array.from({ length: refs.length }, (_, i) => i).sort(
      (a, b) => (blocks[a] as number) - (blocks[b] as number),
    );
    const out = new Array<string>(refs.length);
    let i = 0;
    while (i < order.length) {
      const first = blocks[order[i] as number] as number;
      if (first < 0) {
        out[order[i] as number] = this.unverified();
        i++;
        continue;
      }
      const from = this.blockStarts.at(first);
      let to = from + this.blockLengths.at(first);
      let j = i + 1;
      while (j < order.length) {
        const b = blocks[order[j] as number] as number;
        const s = this.blockStarts.at(b);
        const e = s + this.blockLengths.at(b);
        if (s - to > GAP || Math.max(to, e) - from > SPAN) break;
        to = Math.max(to, e);
        j++;
      }
      const { buf, at: base } = await this.span(from, to);
      const got = buf.length - base;
      let checked = -1;
      let good = false;
      for (let k = i; k < j; k++) {
        const at = order[k] as number;
        const b = blocks[at] as number;
        if (b !== checked) {
          const bs = this.blockStarts.at(b) - from;
          const be = bs + this.blockLengths.at(b);
          good = be <= got && this.digests.matches(b, buf.subarray(base + bs, base + be));
          checked = b;
        }
        // a line not as verified is given as nothing: every caller then asks the service (a line that does not fit)
        const r = refs[at] as number;
        out[at] = good
          ? buf.toString("utf8", base + this.startOf(r) - from, base + this.endOf(r) - from)
          : this.unverified();
      }
      i = j;
    }
    return out;
  }

  /** The bytes from `from` to `to` (fewer where the file was cut): a buffer, and where `from` is in it. */
  private async span(from: number, to: number): Promise<{ buf: Buffer; at: number }> {
    if (to - from > AHEAD) return { buf: await this.readAt(from, to - from), at: 0 };
    for (const s of this.ahead) {
      if (from < s.from || to > s.from + AHEAD) continue;
      const buf = await s.bytes.catch(() => undefined);
      if (buf && to - s.from <= buf.length) return { buf, at: from - s.from };
    }
    const s = { from, bytes: this.readAt(from, AHEAD) };
    this.ahead.push(s);
    if (this.ahead.length > SPANS_KEPT) this.ahead.shift();
    // a failed read is not kept: the next line asks again
    s.bytes.catch(() => {
      const i = this.ahead.indexOf(s);
      if (i >= 0) this.ahead.splice(i, 1);
    });
    return { buf: await s.bytes, at: 0 };
  }

  private async readAt(from: number, length: number): Promise<Buffer> {
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await this.fh.read(buf, got, length - got, from + got);
      if (bytesRead === 0) break; // cut since it was verified (or the end of the file): what is missing does not match
      got += bytesRead;
    }
    return got === length ? buf : buf.subarray(0, got);
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}
