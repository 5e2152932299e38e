/**
 * The previous run's state file, kept on disk: opening it reads every line once, checks it (a list element, field
 * value or record by its head, ./heads.ts; its body when a run uses it) and its MAC (mac.ts), and remembers where each
 * line is (a byte range), a digest per block of lines and what finds each line, never what it says; a run reads the
 * lines it uses when it uses them, and uses only those whose block's digest still matches. So a run with state holds about
 * what a stateless run holds, not the tenant (docs/performance.md, "Memory"), and plans from verified bytes only.
 */
import { timingSafeEqual } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { UserError } from "../model/errors.js";
import { isRecord } from "../model/guards.js";
import { sameService } from "../model/service.js";
import { ITEM, OTHER, VALUE, headOf, newHead, type Head } from "./heads.js";
import { stateMac, type StateKey, type StateMac } from "./mac.js";
import {
  HeaderSchema,
  LineSchema,
  RecordHeadSchema,
  STATE_FORMAT,
  STATE_FORMAT_VERSION,
  itemLine,
  recordHead,
  valueLine,
  type RecordHead,
  type StateHeader,
} from "./schema.js";
import { IdLines } from "./index-tables.js";
import { StateIndex, type ListingRef } from "./state-index.js";
import { rawBatchesOf, Unusable } from "./split.js";

export { StateIndex, type ListingRef, type RecordRef } from "./state-index.js";

/** A file of a newer state format: not used, and not overwritten by this older flowrules. */
export class Newer extends Unusable {
  constructor(readonly version: number) {
    super(
      `was written by a newer flowrules (state format ${version}, this one reads and writes ${STATE_FORMAT_VERSION})`,
    );
  }
}

function issueText(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  const first = issues[0];
  return first ? `${first.path.map(String).join(".") || "(top)"}: ${first.message}` : "does not fit";
}

function sameHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export {
  LineTooLong,
  MAX_LINE_BYTES,
  Unusable,
  lineBatchesOf,
  linesOf,
  rawBatchesOf,
  type FileLine,
  type RawBatch,
  type SplitStats,
} from "./split.js";

export interface IndexOptions {
  /** the dir as the user gave it, for messages */
  dirArg: string;
  /** a state of another base URL is refused (UserError); absent: not checked (`state show`) */
  baseUrl?: string;
  /** the MAC is checked with it (`authentic`); absent: not checked */
  key?: StateKey;
  /** the longest line read (default MAX_LINE_BYTES) */
  maxLine?: number;
  /** keep the ids of each listing's elements (`StateIndex.elementIds`), for `state show` */
  elementIds?: boolean;
}

/**
 * Reads and checks the whole file, keeping only where each line is. Throws `Unusable` (why, for the warning) when it
 * cannot be used in full (`Newer` when a newer flowrules wrote it), and a UserError when it was made for another
 * service. Whether its MAC verifies, and with which key id it was made, the caller judges (`authentic`, `header`).
 */
export async function indexState(fh: FileHandle, opts: IndexOptions): Promise<StateIndex> {
  const cut: { at: number } = { at: -1 };
  try {
    return await indexPass(fh, opts, undefined, cut);
  } catch (err) {
    // cut or damaged after a checkpoint that verified (a run killed while it read, or still writing when it stopped):
    // the file is used up to that checkpoint, read again up to it
    if (!(err instanceof Unusable) || err instanceof Newer || cut.at < 0) throw err;
    return indexPass(fh, opts, cut.at, { at: -1 });
  }
}

/**
 * Lines are read again in blocks of about this many bytes, each with one digest (a line longer than this is a block
 * of its own): a digest per line cost a quarter of the reader's pass at a million instances, a block's digest costs
 * little more than its bytes (docs/performance.md, "A million instances").
 */
export const BLOCK_BYTES = 4096;

/** One pass over the file (up to `until`, a checkpoint's end, when given). */
async function indexPass(
  fh: FileHandle,
  opts: IndexOptions,
  until: number | undefined,
  cut: { at: number },
): Promise<StateIndex> {
  const index = new StateIndex(fh);
  if (opts.elementIds) index.elementIds = new Map();
  const mac = opts.key ? stateMac(opts.key) : undefined;
  const st: PassState = {
    index,
    opts,
    until,
    cut,
    mac,
    pending: new Map(),
    pendingIds: new Map(),
    n: 0,
    ended: false,
    marked: false,
    field: { f0: NaN, f1: NaN, f2: NaN, lines: undefined },
  };
  const head = newHead();
  read: for await (const { buf, at, lines } of rawBatchesOf(fh, opts.maxLine, undefined, true)) {
    // the MAC is fed a batch's bytes at a time (from `macFrom`), up to a line that holds one
    let macFrom = lines[0] as number;
    let blockFrom = -1;
    let blockTo = -1;
    let lastEnd = -1;
    let stop = false;
    for (let x = 0; x < lines.length; x += 2) {
      const s = lines[x] as number;
      const e = lines[x + 1] as number;
      const start = at + s;
      const end = at + e;
      if (until !== undefined && start >= until) {
        stop = true;
        break;
      }
      if (st.ended) throw new Unusable("goes on after its last line (corrupt)");
      if (blockFrom >= 0 && e - blockFrom > BLOCK_BYTES) {
        index.block(at + blockFrom, at + blockTo, buf.subarray(blockFrom, blockTo));
        blockFrom = -1;
      }
      if (blockFrom < 0) blockFrom = s;
      blockTo = e;
      lastEnd = e;
      if (st.n > 0) {
        const kind = headOf(buf, s, e, head);
        if (kind !== OTHER) {
          st.n++;
          placeHead(st, kind, head, start, end);
          continue;
        }
      }
      const line = otherLine(st, buf.subarray(s, e), start, end, () => {
        // a line that holds a MAC: it covers every byte before it
        if (mac) mac.update(buf.subarray(macFrom, s));
        macFrom = s;
      });
      if (line === "stop") {
        stop = true;
        break;
      }
    }
    if (blockFrom >= 0) index.block(at + blockFrom, at + blockTo, buf.subarray(blockFrom, blockTo));
    if (mac && !st.ended && !stop && lastEnd >= 0) {
      mac.update(buf.subarray(macFrom, Math.min(lastEnd + 1, buf.length)));
      if (lastEnd === buf.length) mac.update("\n"); // a last line the file ends without one
    }
    if (stop) break read;
  }
  if (st.n === 0) throw new Unusable("is empty");
  if (!st.ended || !st.marked) throw new Unusable("is not whole (truncated: no last line)");
  // elements with no head (a listing a run left unfinished) are not used: nothing points at them
  index.sealed();
  return index;
}

/** What one pass keeps between lines. */
interface PassState {
  index: StateIndex;
  opts: IndexOptions;
  until: number | undefined;
  cut: { at: number };
  mac: StateMac | undefined;
  /** elements of listings whose head has not come yet: number → page → lines */
  pending: Map<number, number[][]>;
  /** with `elementIds`: their ids, number → ids */
  pendingIds: Map<number, number[]>;
  n: number;
  ended: boolean;
  marked: boolean;
  /** the field of the last value line (they come a field at a time) and its table */
  field: { f0: number; f1: number; f2: number; lines: IdLines | undefined };
}

function placeElement(st: PassState, l: number, p: number, id: number, line: number): void {
  let pages = st.pending.get(l);
  if (!pages) st.pending.set(l, (pages = []));
  while (pages.length <= p) pages.push([]);
  (pages[p] as number[]).push(line);
  if (st.index.elementIds) {
    let ids = st.pendingIds.get(l);
    if (!ids) st.pendingIds.set(l, (ids = []));
    ids.push(id);
  }
}

function placeValue(st: PassState, f0: number, f1: number, f2: number, id: number, line: number): void {
  const last = st.field;
  if (last.lines === undefined || last.f0 !== f0 || last.f1 !== f1 || last.f2 !== f2) {
    const key = `${f0}:${f1}:${f2}`;
    let values = st.index.fields.get(key);
    if (!values) st.index.fields.set(key, (values = new IdLines()));
    st.field = { f0, f1, f2, lines: values };
  }
  (st.field.lines as IdLines).set(id, line);
}

function placeRecord(st: PassState, r: RecordHead, start: number, end: number): void {
  const lut = r.last_updated_time;
  st.index.records.put({
    process_id: r.process_id,
    flags: r.flags,
    id: r.id,
    skeleton: r.skeleton,
    line: st.index.place(start, end),
    written: r.written && typeof lut === "string" ? lut : null,
  });
}

/** A list element, field value or record line as `headOf` read it. */
function placeHead(st: PassState, kind: number, h: Head, start: number, end: number): void {
  if (kind === ITEM) placeElement(st, h.l, h.p, h.id, st.index.place(start, end));
  else if (kind === VALUE) placeValue(st, h.f0, h.f1, h.f2, h.id, st.index.place(start, end));
  else
    placeRecord(
      st,
      {
        process_id: h.process_id,
        flags: h.flags,
        written: false,
        id: h.id,
        last_updated_time: null,
        skeleton: h.skeleton,
      },
      start,
      end,
    );
}

/**
 * Any line `headOf` does not take, through `JSON.parse` and the schemas. A line that holds a MAC has `feed` give the
 * MAC every byte before it first, then judges `authentic`; returns "end" after the last line, "stop" at the
 * checkpoint this pass ends at (`until`).
 */
function otherLine(
  st: PassState,
  bytes: Buffer,
  start: number,
  end: number,
  feed: () => void,
): "end" | "stop" | undefined {
  const { index, opts, mac } = st;
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new Unusable(`is not whole JSON at line ${st.n + 1} (truncated or corrupt)`);
  }
  const where = `line ${st.n + 1}`;
  st.n++;
  if (st.n === 1) {
    index.header = headerOf(raw, opts);
    return undefined;
  }
  if (isRecord(raw) && "item" in raw) {
    const item = itemLine(raw);
    if (!item) throw new Unusable(`cannot be read in full (${where}: not a list element)`);
    placeElement(st, item.l, item.p, item.v.id, index.place(start, end));
    return undefined;
  }
  if (isRecord(raw) && "value" in raw) {
    const value = valueLine(raw);
    if (!value) throw new Unusable(`cannot be read in full (${where}: not a form-field value)`);
    placeValue(st, value.f[0], value.f[1], value.f[2], value.id, index.place(start, end));
    return undefined;
  }
  if (isRecord(raw) && "record" in raw) {
    let r = recordHead(raw);
    if (!r) {
      const head = RecordHeadSchema.safeParse(raw);
      if (!head.success) throw new Unusable(`cannot be read in full (${where}: ${issueText(head.error.issues)})`);
      const h = head.data.record;
      r = {
        process_id: h.process_id,
        flags: h.flags,
        written: h.written === true,
        id: h.compact.record.id,
        last_updated_time: h.compact.record.last_updated_time,
        skeleton: h.compact.skeleton,
      };
    }
    placeRecord(st, r, start, end);
    return undefined;
  }
  const parsed = LineSchema.safeParse(raw);
  if (!parsed.success) throw new Unusable(`cannot be read in full (${where}: ${issueText(parsed.error.issues)})`);
  const v = parsed.data;
  const n = st.n;
  if ("end" in v) {
    if (v.end.lines !== n - 1) throw new Unusable(`is not whole (${n - 1} lines where its end says ${v.end.lines})`);
    feed();
    if (mac) index.authentic = sameHex(mac.digest("hex"), v.end.mac);
    st.ended = true;
    return "end";
  }
  if ("checkpoint" in v) {
    if (v.checkpoint.lines !== n - 1)
      throw new Unusable(`is not whole (${n - 1} lines where a checkpoint says ${v.checkpoint.lines})`);
    feed(); // its own bytes are covered by the MACs after it
    const verified = mac ? sameHex(mac.peek(), v.checkpoint.mac) : true;
    if (!verified) index.authentic = false;
    if (st.until !== undefined && end + 1 >= st.until) {
      // the last checkpoint that verified: the file ends here for this run
      if (mac) index.authentic = verified;
      index.checkpointed = true;
      st.ended = true;
      return "stop";
    }
    if (verified && st.marked && index.authentic !== false) st.cut.at = end + 1;
    return undefined;
  }
  if ("marks" in v) {
    index.marks = v.marks;
    st.marked = true;
  } else if ("skeleton" in v) index.skeletons.set(v.skeleton.key, v.skeleton.snapshot);
  else if ("aborted" in v)
    for (const id of v.aborted.ids) index.aborted.add(id); // state-cache: write-through
  else {
    const head = v.listing;
    const pages = st.pending.get(head.n) ?? [];
    st.pending.delete(head.n);
    if (pages.length > head.pages.length || head.pages.some((p, i) => (pages[i]?.length ?? 0) !== p.size)) {
      throw new Unusable(
        `cannot be read in full (${where}: listing ${head.n} does not hold the elements its head counts)`,
      );
    }
    const ref: ListingRef = {
      process_id: head.process_id,
      query: head.query,
      run_at: head.run_at,
      complete: head.complete,
      pages: head.pages.map((p, i) => ({ count: p.count, lines: Uint32Array.from(pages[i] ?? []) })),
    };
    index.listings.set(`${head.process_id}:${JSON.stringify(head.query)}`, ref);
    const ids = st.pendingIds.get(head.n) ?? [];
    st.pendingIds.delete(head.n);
    index.elementIds?.set(ref, ids);
  }
  return undefined;
}

/** The header (line 1): of this service, of this format version; else why not. */
function headerOf(raw: unknown, opts: IndexOptions): StateHeader {
  if (
    opts.baseUrl !== undefined &&
    isRecord(raw) &&
    typeof raw.base_url === "string" &&
    !sameService(raw.base_url, opts.baseUrl)
  ) {
    throw new UserError(
      `the state dir ${opts.dirArg} was made for another service (${raw.base_url}), not ${opts.baseUrl}: use another --state dir`,
    );
  }
  if (
    isRecord(raw) &&
    raw.format === STATE_FORMAT &&
    typeof raw.format_version === "number" &&
    raw.format_version > STATE_FORMAT_VERSION
  ) {
    throw new Newer(raw.format_version);
  }
  if (!isRecord(raw) || raw.format !== STATE_FORMAT || raw.format_version !== STATE_FORMAT_VERSION) {
    const version = isRecord(raw) ? String(raw.format_version) : "?";
    throw new Unusable(`is in another state format (${version}, this flowrules writes ${STATE_FORMAT_VERSION})`);
  }
  const header = HeaderSchema.safeParse(raw);
  if (!header.success) throw new Unusable(`cannot be read in full (line 1: ${issueText(header.error.issues)})`);
  return header.data;
}
