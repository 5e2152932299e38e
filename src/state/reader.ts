/**
 * The previous run's state file, kept on disk: opening it reads every line once, checks it and remembers where it is
 * (a byte range) and what finds it, never what it says; a run reads the lines it uses when it uses them. So a run
 * with state holds about what a stateless run holds, not the tenant (docs/performance.md, "Memory").
 */
import type { FileHandle } from "node:fs/promises";
import { UserError } from "../model/errors.js";
import { isRecord } from "../model/guards.js";
import { HeaderSchema, LineSchema, RecordHeadSchema, STATE_FORMAT, STATE_FORMAT_VERSION, itemLine, valueLine, type ListingHead, type Marks, type StateHeader } from "./schema.js";

/** A listing of the previous run: its question, and per page the lines of its elements. */
export interface ListingRef {
  process_id: number;
  query: ListingHead["query"];
  run_at: string;
  complete: boolean;
  pages: Array<{ count: number | null; lines: number[] }>;
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

/** Why a file is not used: shown in the one warning line. */
export class Unusable extends Error {}

/** Reads that many bytes of the file at most in one go; a longer line is read on its own. */
const SPAN = 4 * 1024 * 1024;
/** Lines closer than this are read together (one read of the bytes between is cheaper than two reads). */
const GAP = 64 * 1024;

export class StateIndex {
  /** listings by `process_id:query`: the last one written with that question */
  readonly listings = new Map<string, ListingRef>();
  /** records by `id:flags` */
  readonly records = new Map<string, RecordRef>();
  /** `process:step:action` → instance id → its value's line */
  readonly fields = new Map<string, Map<number, number>>();
  readonly skeletons = new Map<string, unknown>();
  /** instances a bulk abort of ours returned (state-cache: write-through) */
  readonly aborted = new Set<number>();
  header!: StateHeader;
  marks: Marks = {};
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  constructor(private readonly fh: FileHandle) {}

  /** Remembers a line's byte range; its number finds it again. */
  place(start: number, end: number): number {
    this.starts.push(start);
    this.ends.push(end);
    return this.starts.length - 1;
  }

  /** The text of these lines, in the order asked: lines near each other are read in one go. */
  async lines(refs: readonly number[]): Promise<string[]> {
    const order = refs.map((_, i) => i).sort((a, b) => (this.starts[refs[a] as number] as number) - (this.starts[refs[b] as number] as number));
    const out = new Array<string>(refs.length);
    let i = 0;
    while (i < order.length) {
      const first = refs[order[i] as number] as number;
      const from = this.starts[first] as number;
      let to = this.ends[first] as number;
      let j = i + 1;
      while (j < order.length) {
        const r = refs[order[j] as number] as number;
        const s = this.starts[r] as number;
        const e = this.ends[r] as number;
        if (s - to > GAP || Math.max(to, e) - from > SPAN) break;
        to = Math.max(to, e);
        j++;
      }
      const buf = Buffer.allocUnsafe(to - from);
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await this.fh.read(buf, got, buf.length - got, from + got);
        if (bytesRead === 0) throw new UserError("the state file changed while a run used it (it is locked: was it edited by hand?)");
        got += bytesRead;
      }
      for (let k = i; k < j; k++) {
        const r = refs[order[k] as number] as number;
        out[order[k] as number] = buf.toString("utf8", (this.starts[r] as number) - from, (this.ends[r] as number) - from);
      }
      i = j;
    }
    return out;
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

function issueText(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  const first = issues[0];
  return first ? `${first.path.map(String).join(".") || "(top)"}: ${first.message}` : "does not fit";
}

/** The file's lines with their byte ranges, split on `\n` as the bytes come. */
async function* linesOf(fh: FileHandle): AsyncGenerator<{ text: string; start: number; end: number }> {
  let carry: Buffer | undefined;
  let carryStart = 0;
  let pos = 0;
  for await (const chunk of fh.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false, start: 0 })) {
    const buf = chunk as Buffer;
    let from = 0;
    for (let nl = buf.indexOf(10, from); nl !== -1; nl = buf.indexOf(10, from)) {
      const piece = buf.subarray(from, nl);
      const whole = carry ? Buffer.concat([carry, piece]) : piece;
      const start = carry ? carryStart : pos + from;
      carry = undefined;
      yield { text: whole.toString("utf8"), start, end: pos + nl };
      from = nl + 1;
    }
    if (from < buf.length) {
      const rest = buf.subarray(from);
      if (carry) carry = Buffer.concat([carry, rest]);
      else {
        carry = Buffer.from(rest); // a copy: the stream may reuse its chunk
        carryStart = pos + from;
      }
    }
    pos += buf.length;
  }
  if (carry) yield { text: carry.toString("utf8"), start: carryStart, end: pos };
}

/**
 * Reads and checks the whole file, keeping only where each line is. Throws `Unusable` (why, for the warning) when it
 * cannot be used in full, and a UserError when it was made for another service.
 */
export async function indexState(fh: FileHandle, dirArg: string, baseUrl: string, keyDigest: string | null): Promise<StateIndex> {
  const index = new StateIndex(fh);
  /** elements of listings whose head has not come yet: number → page → lines */
  const pending = new Map<number, number[][]>();
  let n = 0;
  let ended = false;
  let marked = false;
  for await (const { text, start, end } of linesOf(fh)) {
    if (ended) throw new Unusable("goes on after its last line (corrupt)");
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new Unusable(`is not whole JSON at line ${n + 1} (truncated or corrupt)`);
    }
    const where = `line ${n + 1}`;
    n++;
    if (n === 1) {
      if (isRecord(raw) && typeof raw.base_url === "string" && raw.base_url !== baseUrl) {
        throw new UserError(`the state dir ${dirArg} was made for another service (${raw.base_url}), not ${baseUrl}: use another --state dir`);
      }
      if (!isRecord(raw) || raw.format !== STATE_FORMAT || raw.format_version !== STATE_FORMAT_VERSION) {
        const version = isRecord(raw) ? String(raw.format_version) : "?";
        throw new Unusable(`is in another state format (${version}, this flowrules writes ${STATE_FORMAT_VERSION})`);
      }
      const header = HeaderSchema.safeParse(raw);
      if (!header.success) throw new Unusable(`cannot be read in full (${where}: ${issueText(header.error.issues)})`);
      if (header.data.key_digest !== keyDigest) throw new Unusable("was made with another API key");
      index.header = header.data;
      continue;
    }
    if (isRecord(raw) && "item" in raw) {
      const item = itemLine(raw);
      if (!item) throw new Unusable(`cannot be read in full (${where}: not a list element)`);
      let pages = pending.get(item.l);
      if (!pages) pending.set(item.l, (pages = []));
      while (pages.length <= item.p) pages.push([]);
      (pages[item.p] as number[]).push(index.place(start, end));
      continue;
    }
    if (isRecord(raw) && "value" in raw) {
      const value = valueLine(raw);
      if (!value) throw new Unusable(`cannot be read in full (${where}: not a form-field value)`);
      const key = value.f.join(":");
      let values = index.fields.get(key);
      if (!values) index.fields.set(key, (values = new Map()));
      values.set(value.id, index.place(start, end));
      continue;
    }
    if (isRecord(raw) && "record" in raw) {
      const head = RecordHeadSchema.safeParse(raw);
      if (!head.success) throw new Unusable(`cannot be read in full (${where}: ${issueText(head.error.issues)})`);
      const r = head.data.record;
      const id = r.compact.record.id;
      const lut = r.compact.record.last_updated_time;
      const written = r.written === true && typeof lut === "string" ? lut : null;
      index.records.set(`${id}:${r.flags}`, { process_id: r.process_id, flags: r.flags, id, skeleton: r.compact.skeleton, line: index.place(start, end), written });
      continue;
    }
    const parsed = LineSchema.safeParse(raw);
    if (!parsed.success) throw new Unusable(`cannot be read in full (${where}: ${issueText(parsed.error.issues)})`);
    const v = parsed.data;
    if ("end" in v) {
      if (v.end.lines !== n - 1) throw new Unusable(`is not whole (${n - 1} lines where its end says ${v.end.lines})`);
      ended = true;
    } else if ("marks" in v) {
      index.marks = v.marks;
      marked = true;
    } else if ("skeleton" in v) index.skeletons.set(v.skeleton.key, v.skeleton.snapshot);
    else if ("aborted" in v) for (const id of v.aborted.ids) index.aborted.add(id); // state-cache: write-through
    else {
      const head = v.listing;
      const pages = pending.get(head.n) ?? [];
      pending.delete(head.n);
      if (pages.length > head.pages.length || head.pages.some((p, i) => (pages[i]?.length ?? 0) !== p.size)) {
        throw new Unusable(`cannot be read in full (${where}: listing ${head.n} does not hold the elements its head counts)`);
      }
      index.listings.set(`${head.process_id}:${JSON.stringify(head.query)}`, {
        process_id: head.process_id,
        query: head.query,
        run_at: head.run_at,
        complete: head.complete,
        pages: head.pages.map((p, i) => ({ count: p.count, lines: pages[i] ?? [] })),
      });
    }
  }
  if (n === 0) throw new Unusable("is empty");
  if (!ended || !marked) throw new Unusable("is not whole (truncated: no last line)");
  // elements with no head (a listing a run left unfinished) are not used: nothing points at them
  return index;
}
