/**
 * The previous run's state file, kept on disk: opening it reads every line once, checks it and its MAC (mac.ts) and
 * remembers where each line is (a byte range), its digest and what finds it, never what it says; a run reads the
 * lines it uses when it uses them, and uses only those whose digest still matches. So a run with state holds about
 * what a stateless run holds, not the tenant (docs/performance.md, "Memory"), and plans from verified bytes only.
 */
import { timingSafeEqual } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { UserError } from "../model/errors.js";
import { isRecord } from "../model/guards.js";
import { sameService } from "../model/service.js";
import { stateMac, type StateKey } from "./mac.js";
import {
  HeaderSchema,
  LineSchema,
  RecordHeadSchema,
  STATE_FORMAT,
  STATE_FORMAT_VERSION,
  itemLine,
  recordHead,
  valueLine,
} from "./schema.js";
import { IdLines } from "./index-tables.js";
import { StateIndex } from "./state-index.js";

export { StateIndex, type ListingRef, type RecordRef } from "./state-index.js";

/** Why a file is not used: shown in the one warning line. */
export class Unusable extends Error {}

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

/**
 * The longest line a state file may hold. A line is one answer of the service at most (a record, a listing element, a
 * field value), and the API client refuses answers above 64 MiB (src/api/client.ts); the rest is slack for escaping.
 * A longer line is not read to its end: the file is not used (one warning, a full run).
 */
export const MAX_LINE_BYTES = 72 * 1024 * 1024;

/** A line longer than the cap: the file is not used. */
export class LineTooLong extends Unusable {}

/** Work done splitting lines, for the tests: bytes copied into joined lines. */
export interface SplitStats {
  copied: number;
}

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MiB` : `${bytes} bytes`;
}

/** A line of the file: its bytes (no `\n`) and its byte range. */
export interface FileLine {
  bytes: Buffer;
  start: number;
  end: number;
}

/**
 * The file's lines with their byte ranges, split on `\n` as the bytes come, one batch per chunk read (a million lines
 * cost a million awaits one at a time: a tenth of the reader's pass). Linear in the file: a line that spans chunks
 * keeps its pieces and is joined once, at its end (joining at every chunk made a 100 MB line cost 24 s); a line that
 * grows past `maxLine` stops the read there, after the lines before it are given.
 */
export async function* lineBatchesOf(
  fh: FileHandle,
  maxLine = MAX_LINE_BYTES,
  stats?: SplitStats,
): AsyncGenerator<FileLine[]> {
  let parts: Buffer[] = [];
  let partsLength = 0;
  let carryStart = 0;
  let pos = 0;
  let lineNo = 0;
  const tooLong = (): LineTooLong =>
    new LineTooLong(`has a line longer than ${mib(maxLine)} (line ${lineNo + 1}; corrupt or not written by flowrules)`);
  const join = (last: Buffer | undefined): Buffer => {
    const all = last ? [...parts, last] : parts;
    if (all.length === 1) return all[0] as Buffer;
    const whole = Buffer.concat(all);
    if (stats) stats.copied += whole.length;
    return whole;
  };
  // plain reads at positions: the handle stays open whatever the caller does (a stream's end would close it)
  for (;;) {
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
    if (bytesRead === 0) break;
    const buf = chunk.subarray(0, bytesRead);
    const batch: FileLine[] = [];
    let from = 0;
    for (let nl = buf.indexOf(10, from); nl !== -1; nl = buf.indexOf(10, from)) {
      const piece = buf.subarray(from, nl);
      if (partsLength + piece.length > maxLine) {
        if (batch.length > 0) yield batch;
        throw tooLong();
      }
      const start = partsLength > 0 ? carryStart : pos + from;
      const whole = partsLength > 0 ? join(piece) : piece;
      parts = [];
      partsLength = 0;
      lineNo++;
      batch.push({ bytes: whole, start, end: pos + nl });
      from = nl + 1;
    }
    if (batch.length > 0) yield batch;
    if (from < buf.length) {
      const rest = buf.subarray(from);
      if (partsLength + rest.length > maxLine) throw tooLong();
      if (partsLength === 0) carryStart = pos + from;
      // a copy: the chunk is the batch's lines' memory, and the next read takes a new one
      parts.push(Buffer.from(rest));
      if (stats) stats.copied += rest.length;
      partsLength += rest.length;
    }
    pos += buf.length;
  }
  if (partsLength > 0) yield [{ bytes: join(undefined), start: carryStart, end: pos }];
}

/** The file's lines one at a time (`lineBatchesOf`, unbatched). */
export async function* linesOf(fh: FileHandle, maxLine = MAX_LINE_BYTES, stats?: SplitStats): AsyncGenerator<FileLine> {
  for await (const batch of lineBatchesOf(fh, maxLine, stats)) yield* batch;
}

export interface IndexOptions {
  /** the dir as the user gave it, for messages */
  dirArg: string;
  /** a state of another base URL is refused (UserError); absent: not checked (`state show`) */
  baseUrl?: string;
  /** the MAC is checked with it (`authentic`); absent: not checked */
  key?: StateKey;
  /** the longest line read (default MAX_LINE_BYTES) */
  maxLine?: number;
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

async function indexPass(
  fh: FileHandle,
  opts: IndexOptions,
  until: number | undefined,
  cut: { at: number },
): Promise<StateIndex> {
  const index = new StateIndex(fh);
  const mac = opts.key ? stateMac(opts.key) : undefined;
  /** elements of listings whose head has not come yet: number → page → lines */
  const pending = new Map<number, number[][]>();
  let n = 0;
  let ended = false;
  let marked = false;
  read: for await (const batch of lineBatchesOf(fh, opts.maxLine))
    for (const { bytes, start, end } of batch) {
      if (until !== undefined && start >= until) break read;
      if (ended) throw new Unusable("goes on after its last line (corrupt)");
      let raw: unknown;
      try {
        raw = JSON.parse(bytes.toString("utf8"));
      } catch {
        throw new Unusable(`is not whole JSON at line ${n + 1} (truncated or corrupt)`);
      }
      const where = `line ${n + 1}`;
      n++;
      const isEnd = isRecord(raw) && ("end" in raw || "checkpoint" in raw);
      // the MAC covers every byte before the last line, which holds it
      if (!isEnd && mac) mac.update(bytes).update("\n");
      if (n === 1) {
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
        if (!header.success) throw new Unusable(`cannot be read in full (${where}: ${issueText(header.error.issues)})`);
        index.header = header.data;
        continue;
      }
      if (isRecord(raw) && "item" in raw) {
        const item = itemLine(raw);
        if (!item) throw new Unusable(`cannot be read in full (${where}: not a list element)`);
        let pages = pending.get(item.l);
        if (!pages) pending.set(item.l, (pages = []));
        while (pages.length <= item.p) pages.push([]);
        (pages[item.p] as number[]).push(index.place(start, end, bytes));
        continue;
      }
      if (isRecord(raw) && "value" in raw) {
        const value = valueLine(raw);
        if (!value) throw new Unusable(`cannot be read in full (${where}: not a form-field value)`);
        const key = value.f.join(":");
        let values = index.fields.get(key);
        if (!values) index.fields.set(key, (values = new IdLines()));
        values.set(value.id, index.place(start, end, bytes));
        continue;
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
        const lut = r.last_updated_time;
        index.records.put({
          process_id: r.process_id,
          flags: r.flags,
          id: r.id,
          skeleton: r.skeleton,
          line: index.place(start, end, bytes),
          written: r.written && typeof lut === "string" ? lut : null,
        });
        continue;
      }
      const parsed = LineSchema.safeParse(raw);
      if (!parsed.success) throw new Unusable(`cannot be read in full (${where}: ${issueText(parsed.error.issues)})`);
      const v = parsed.data;
      if ("end" in v) {
        if (v.end.lines !== n - 1)
          throw new Unusable(`is not whole (${n - 1} lines where its end says ${v.end.lines})`);
        if (mac) index.authentic = sameHex(mac.digest("hex"), v.end.mac);
        ended = true;
      } else if ("checkpoint" in v) {
        if (v.checkpoint.lines !== n - 1)
          throw new Unusable(`is not whole (${n - 1} lines where a checkpoint says ${v.checkpoint.lines})`);
        const verified = mac ? sameHex(mac.peek(), v.checkpoint.mac) : true;
        if (!verified) index.authentic = false;
        if (until !== undefined && end + 1 >= until) {
          // the last checkpoint that verified: the file ends here for this run
          if (mac) index.authentic = verified;
          index.checkpointed = true;
          ended = true;
          if (mac) mac.update(bytes).update("\n");
          break read;
        }
        if (verified && marked && index.authentic !== false) cut.at = end + 1;
        if (mac) mac.update(bytes).update("\n"); // a checkpoint's bytes are covered by the MACs after it
      } else if ("marks" in v) {
        index.marks = v.marks;
        marked = true;
      } else if ("skeleton" in v) index.skeletons.set(v.skeleton.key, v.skeleton.snapshot);
      else if ("aborted" in v)
        for (const id of v.aborted.ids) index.aborted.add(id); // state-cache: write-through
      else {
        const head = v.listing;
        const pages = pending.get(head.n) ?? [];
        pending.delete(head.n);
        if (pages.length > head.pages.length || head.pages.some((p, i) => (pages[i]?.length ?? 0) !== p.size)) {
          throw new Unusable(
            `cannot be read in full (${where}: listing ${head.n} does not hold the elements its head counts)`,
          );
        }
        index.listings.set(`${head.process_id}:${JSON.stringify(head.query)}`, {
          process_id: head.process_id,
          query: head.query,
          run_at: head.run_at,
          complete: head.complete,
          pages: head.pages.map((p, i) => ({ count: p.count, lines: Uint32Array.from(pages[i] ?? []) })),
        });
      }
    }
  if (n === 0) throw new Unusable("is empty");
  if (!ended || !marked) throw new Unusable("is not whole (truncated: no last line)");
  // elements with no head (a listing a run left unfinished) are not used: nothing points at them
  index.sealed();
  return index;
}
