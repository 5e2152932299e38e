/**
 * The state file's lines as its bytes come (./reader.ts reads every line once when it opens a state): split on `\n`
 * a read chunk at a time, linear in the file, each line capped.
 */
import type { FileHandle } from "node:fs/promises";

/** Why a file is not used: shown in the one warning line. */
export class Unusable extends Error {}

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

/** Bytes read at a time. */
const CHUNK = 1024 * 1024;

/** A line of the file: its bytes (no `\n`) and its byte range. */
export interface FileLine {
  bytes: Buffer;
  start: number;
  end: number;
}

/**
 * Lines of one buffer: `buf[0]` is the file's byte `at`; `lines` holds each line's [start, end) in `buf`, its `\n`
 * at `end` (but for a last line the file ends without one). No object or buffer per line.
 */
export interface RawBatch {
  buf: Buffer;
  at: number;
  lines: number[];
}

/**
 * The file's lines as the bytes come, one batch per chunk read (a million lines cost a million awaits one at a time:
 * a tenth of the reader's pass). Linear in the file: a line that spans chunks keeps its pieces and is joined once,
 * at its end, into a batch of its own (joining at every chunk made a 100 MB line cost 24 s); a line that grows past
 * `maxLine` stops the read there, after the lines before it are given.
 */
export async function* rawBatchesOf(
  fh: FileHandle,
  maxLine = MAX_LINE_BYTES,
  stats?: SplitStats,
  /** the caller is done with a batch's bytes when it asks for the next: one chunk read into again and again */
  reuse = false,
): AsyncGenerator<RawBatch> {
  let reused: Buffer | undefined;
  let parts: Buffer[] = [];
  let partsLength = 0;
  let carryStart = 0;
  let pos = 0;
  let lineNo = 0;
  const tooLong = (): LineTooLong =>
    new LineTooLong(`has a line longer than ${mib(maxLine)} (line ${lineNo + 1}; corrupt or not written by flowrules)`);
  const join = (last: Buffer | undefined): Buffer => {
    const whole = Buffer.concat(last ? [...parts, last] : parts);
    if (stats) stats.copied += whole.length;
    parts = [];
    partsLength = 0;
    return whole;
  };
  // plain reads at positions: the handle stays open whatever the caller does (a stream's end would close it)
  for (;;) {
    const chunk = reuse ? (reused ??= Buffer.allocUnsafe(CHUNK)) : Buffer.allocUnsafe(CHUNK);
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
    if (bytesRead === 0) break;
    const buf = chunk.subarray(0, bytesRead);
    const lines: number[] = [];
    let from = 0;
    for (let nl = buf.indexOf(10, from); nl !== -1; nl = buf.indexOf(10, from)) {
      if (partsLength + (nl - from) > maxLine) {
        if (lines.length > 0) yield { buf, at: pos, lines };
        throw tooLong();
      }
      lineNo++;
      if (partsLength > 0) {
        // the end of a line begun in an earlier chunk: joined with its \n, a batch of its own
        const whole = join(buf.subarray(from, nl + 1));
        yield { buf: whole, at: carryStart, lines: [0, whole.length - 1] };
      } else lines.push(from, nl);
      from = nl + 1;
    }
    if (lines.length > 0) yield { buf, at: pos, lines };
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
  if (partsLength > 0) {
    const whole = join(undefined);
    yield { buf: whole, at: carryStart, lines: [0, whole.length] };
  }
}

/** The file's lines with their byte ranges, a batch per chunk read (`rawBatchesOf`, a buffer per line). */
export async function* lineBatchesOf(
  fh: FileHandle,
  maxLine = MAX_LINE_BYTES,
  stats?: SplitStats,
): AsyncGenerator<FileLine[]> {
  for await (const { buf, at, lines } of rawBatchesOf(fh, maxLine, stats)) {
    const batch: FileLine[] = [];
    for (let i = 0; i < lines.length; i += 2) {
      const s = lines[i] as number;
      const e = lines[i + 1] as number;
      batch.push({ bytes: buf.subarray(s, e), start: at + s, end: at + e });
    }
    yield batch;
  }
}

/** The file's lines one at a time (`lineBatchesOf`, unbatched). */
export async function* linesOf(fh: FileHandle, maxLine = MAX_LINE_BYTES, stats?: SplitStats): AsyncGenerator<FileLine> {
  for await (const batch of lineBatchesOf(fh, maxLine, stats)) yield* batch;
}
