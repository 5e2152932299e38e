/**
 * What an open state file is known by (./reader.ts builds it, reading and checking every line once): where each line
 * is, its digest and what finds it, never what it says; and the lines read again when a run uses them, given only
 * when their digest still matches.
 */
import type { FileHandle } from "node:fs/promises";
import { IdLines, NumberColumn, RecordTable } from "./index-tables.js";
import { LineDigests } from "./mac.js";
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
  /** per line its first byte, and its length (a line is at most 72 MiB) */
  private readonly starts = new NumberColumn(new Float64Array(0));
  private readonly lengths = new NumberColumn(new Uint32Array(0));
  private readonly digests = new LineDigests();
  /** lines read again that were not the verified ones (edited after the file was opened): not used */
  private changed = 0;
  /** told once, when a line read again is not the one verified */
  onChanged: (() => void) | undefined;
  /** spans read ahead for lines asked alone: their first byte and their bytes (being read, or read) */
  private readonly ahead: Array<{ from: number; bytes: Promise<Buffer> }> = [];

  constructor(private readonly fh: FileHandle) {}

  /** Remembers a line's byte range and digest; its number finds it again. */
  place(start: number, end: number, bytes: Uint8Array): number {
    this.starts.push(start);
    this.lengths.push(end - start);
    this.digests.add(bytes);
    return this.starts.length - 1;
  }

  /** Bytes the index holds per line kept (byte range and digest), for the memory figures. */
  get digestBytes(): number {
    return this.digests.heldBytes;
  }

  /** Bytes of the typed arrays of the index: lines, records, form-field values (for the memory figures). */
  get heldBytes(): number {
    let n = this.digests.heldBytes + this.starts.heldBytes + this.lengths.heldBytes + this.records.heldBytes;
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

  /** The text of these lines, in the order asked: lines near each other are read in one go. */
  async lines(refs: ArrayLike<number>): Promise<string[]> {
    const order = Array.from({ length: refs.length }, (_, i) => i).sort(
      (a, b) => this.startOf(refs[a] as number) - this.startOf(refs[b] as number),
    );
    const out = new Array<string>(refs.length);
    let i = 0;
    while (i < order.length) {
      const first = refs[order[i] as number] as number;
      const from = this.startOf(first);
      let to = this.endOf(first);
      let j = i + 1;
      while (j < order.length) {
        const r = refs[order[j] as number] as number;
        const s = this.startOf(r);
        const e = this.endOf(r);
        if (s - to > GAP || Math.max(to, e) - from > SPAN) break;
        to = Math.max(to, e);
        j++;
      }
      const { buf, at } = await this.span(from, to);
      const got = buf.length - at;
      for (let k = i; k < j; k++) {
        const r = refs[order[k] as number] as number;
        const a = this.startOf(r) - from;
        const b = this.endOf(r) - from;
        // a line not as verified is given as nothing: every caller then asks the service (a line that does not fit)
        const line = b <= got ? buf.subarray(at + a, at + b) : undefined;
        out[order[k] as number] = line && this.digests.matches(r, line) ? line.toString("utf8") : this.unverified();
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
