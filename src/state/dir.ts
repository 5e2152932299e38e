/**
 * The state dir on disk: one lock file while a run uses it, one state file replaced atomically (temp file, fsync,
 * rename) at the end of a successful run, so a crash leaves the previous state and two runs cannot interleave.
 */
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { z } from "zod";
import { UserError } from "../model/errors.js";
import { errorMessage, isRecord } from "../model/guards.js";
import { HeaderSchema, LineSchema, lineBytes, plainLine, settingsSharer, RecordHeadSchema, LOCK_FILE, STATE_FILE, STATE_FORMAT, STATE_FORMAT_VERSION, type StateData, type Listing, type FieldEntry } from "./schema.js";

export interface OpenedState {
  dir: string;
  /** the last run's state, when there is one that can be used in full */
  previous: StateData | undefined;
  /** one line each: why the previous state is not used */
  warnings: string[];
  /** replaces the state file atomically */
  write(data: StateData): Promise<void>;
  /** removes the lock (idempotent) */
  release(): Promise<void>;
}

/** How long the lock of a run on another host holds without a way to check that run (as apply's --lock-timeout). */
export const FOREIGN_LOCK_MS = 30 * 60_000;

function code(err: unknown): string {
  return isRecord(err) && typeof err.code === "string" ? err.code : "";
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return code(err) === "EPERM";
  }
}

async function takeLock(dir: string): Promise<string> {
  const file = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(file, "wx", 0o644);
      await fh.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      await fh.close();
      return file;
    } catch (err) {
      if (code(err) !== "EEXIST") throw new UserError(`cannot use the state dir ${dir}: ${describeFsError(err)}`);
      let holder: unknown;
      try {
        holder = JSON.parse(await readFile(file, "utf8"));
      } catch {
        holder = undefined;
      }
      const pid = isRecord(holder) && typeof holder.pid === "number" ? holder.pid : undefined;
      const host = isRecord(holder) && typeof holder.host === "string" ? holder.host : undefined;
      const since = isRecord(holder) && typeof holder.since === "string" ? holder.since : "?";
      // another host's lock cannot be checked: it holds until it is FOREIGN_LOCK_MS old (a CI cache may carry the
      // lock of a killed job from another runner)
      const foreignLive = host !== hostname() && !(Date.now() - Date.parse(since) > FOREIGN_LOCK_MS);
      if (pid !== undefined && (host === hostname() ? alive(pid) : foreignLive)) {
        throw new UserError(`the state dir ${dir} is in use by another flowrules run (pid ${pid}${host !== hostname() ? ` on ${host}` : ""}, since ${since}); try again when it has finished`);
      }
      // the run that held it is gone (killed): its lock is stale, and its state file is whole (written by rename)
      await rm(file, { force: true });
    }
  }
  throw new UserError(`the state dir ${dir} is in use by another flowrules run; try again when it has finished`);
}

function describeFsError(err: unknown): string {
  switch (code(err)) {
    case "EACCES":
    case "EPERM":
      return "not writable (permission denied)";
    case "EROFS":
      return "not writable (read-only file system)";
    case "ENOTDIR":
    case "EEXIST":
      return "not a directory";
    case "ENOSPC":
      return "no space left on the device";
    default:
      return errorMessage(err);
  }
}

/**
 * Opens (creating it if needed) and locks a state dir for a run against `baseUrl`. Fails with one line, before any
 * request, when the dir cannot be written, is in use, or was made for another base URL. A state file that cannot be
 * read in full is reported in `warnings` and not used.
 */
export async function openStateDir(dirArg: string, baseUrl: string): Promise<OpenedState> {
  const dir = resolve(dirArg);
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new UserError(`cannot use the state dir ${dirArg}: ${describeFsError(err)}`);
  }
  const lock = await takeLock(dir);
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    await rm(lock, { force: true });
  };
  try {
    const { previous, warnings } = await readState(dir, dirArg, baseUrl);
    return { dir, previous, warnings, release, write: (data) => writeState(dir, data) };
  } catch (err) {
    await release();
    throw err;
  }
}

/** `{"listing": …}` as the text of its parts, its list elements one by one (the same JSON as one `JSON.stringify`, `pages` last). */
function* listingPieces(listing: Listing): Generator<string> {
  const { pages, ...rest } = listing;
  const head = JSON.stringify({ listing: rest }); // {"listing":{…}}
  yield `${head.slice(0, -2)},"pages":[`;
  for (let p = 0; p < pages.length; p++) {
    const page = pages[p] as Listing["pages"][number];
    yield `${p > 0 ? "," : ""}{"count":${JSON.stringify(page.count)},"results":[`;
    for (let i = 0; i < page.results.length; i++) yield `${i > 0 ? "," : ""}${JSON.stringify(page.results[i])}`;
    yield "]}";
  }
  yield "]}}";
}

/** `{"field": …}` as the text of its parts, its values one by one. */
function* fieldPieces(field: FieldEntry): Generator<string> {
  const { values, ...rest } = field;
  const head = JSON.stringify({ field: rest });
  yield `${head.slice(0, -2)},"values":[`;
  for (let i = 0; i < values.length; i++) yield `${i > 0 ? "," : ""}${JSON.stringify(values[i])}`;
  yield "]}}";
}

/** One JSON document a line: written as a stream (backpressure honoured), fsynced, then renamed over the old file. */
async function writeState(dir: string, data: StateData): Promise<void> {
  const target = join(dir, STATE_FILE);
  const temp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
  const fh = await open(temp, "w", 0o644);
  try {
    // lines gathered into batches of about 1 MB: never the whole state as one string
    let batch: string[] = [];
    let size = 0;
    let lines = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await fh.write(batch.join(""));
      batch = [];
      size = 0;
    };
    const putLine = async (line: string | Buffer): Promise<void> => {
      const text = typeof line === "string" ? line : line.toString("utf8");
      lines++;
      batch.push(text, "\n");
      size += text.length + 1;
      if (size >= 1_000_000) await flush();
    };
    const put = (value: unknown): Promise<void> => putLine(JSON.stringify(value));
    // a line written in pieces, one list element each: a listing of 25,000 elements is never one string
    const putPieces = async (pieces: Iterable<string>): Promise<void> => {
      lines++;
      for (const piece of pieces) {
        batch.push(piece);
        size += piece.length;
        if (size >= 1_000_000) await flush();
      }
      batch.push("\n");
      size += 1;
      if (size >= 1_000_000) await flush();
    };
    await put(data.header);
    for (const listing of data.listings) await putPieces(listingPieces(listing));
    for (const [key, snapshot] of data.skeletons) await put({ skeleton: { key, snapshot } });
    for (const record of data.records) await putLine(record.line);
    for (const field of data.fields) await putPieces(fieldPieces(field));
    await put({ end: { lines: lines } });
    await flush();
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(temp, target);
}

async function readState(dir: string, dirArg: string, baseUrl: string): Promise<{ previous: StateData | undefined; warnings: string[] }> {
  const file = join(dir, STATE_FILE);
  const shown = join(dirArg, STATE_FILE);
  const unusable = (why: string): { previous: undefined; warnings: string[] } => ({ previous: undefined, warnings: [`state: ${shown} ${why}: this run reads everything and rewrites it`] });
  let stream;
  try {
    const fh = await open(file, "r");
    stream = fh.createReadStream({ encoding: "utf8" });
  } catch (err) {
    if (code(err) === "ENOENT") return { previous: undefined, warnings: [] };
    return unusable(`cannot be read (${describeFsError(err)})`);
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const data: StateData = { header: undefined as unknown as StateData["header"], listings: [], skeletons: new Map(), records: [], fields: [] };
  const share = settingsSharer();
  let n = 0;
  let ended = false;
  try {
    for await (const line of lines) {
      if (ended) return unusable("goes on after its last line (corrupt)");
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        return unusable(`is not whole JSON at line ${n + 1} (truncated or corrupt)`);
      }
      if (n === 0) {
        if (isRecord(raw) && typeof raw.base_url === "string" && raw.base_url !== baseUrl) {
          throw new UserError(`the state dir ${dirArg} was made for another service (${raw.base_url}), not ${baseUrl}: use another --state dir`);
        }
        if (!isRecord(raw) || raw.format !== STATE_FORMAT || raw.format_version !== STATE_FORMAT_VERSION) {
          const version = isRecord(raw) ? String(raw.format_version) : "?";
          return unusable(`is in another state format (${version}, this flowrules writes ${STATE_FORMAT_VERSION})`);
        }
        const header = HeaderSchema.safeParse(raw);
        if (!header.success) return unusable(`cannot be read in full (line 1: ${issueText(header.error.issues)})`);
        data.header = header.data;
        n++;
        continue;
      }
      if (isRecord(raw) && "record" in raw) {
        const head = RecordHeadSchema.safeParse(raw);
        if (!head.success) return unusable(`cannot be read in full (line ${n + 1}: ${issueText(head.error.issues)})`);
        const r = head.data.record;
        data.records.push({ process_id: r.process_id, flags: r.flags, id: r.compact.record.id, skeleton: r.compact.skeleton, line: lineBytes(line) });
        n++;
        continue;
      }
      let v: z.infer<typeof LineSchema> | undefined = isRecord(raw) && ("listing" in raw || "field" in raw) ? plainLine(raw) : undefined;
      if (v === undefined) {
        const parsed = LineSchema.safeParse(raw);
        if (!parsed.success) return unusable(`cannot be read in full (line ${n + 1}: ${issueText(parsed.error.issues)})`);
        v = parsed.data;
      }
      if ("end" in v) {
        if (v.end.lines !== n) return unusable(`is not whole (${n} lines where its end says ${v.end.lines})`);
        ended = true;
      } else if ("listing" in v) data.listings.push(v.listing);
      else if ("skeleton" in v) data.skeletons.set(v.skeleton.key, v.skeleton.snapshot);
      else {
        for (const [, value] of v.field.values) share(value);
        data.fields.push(v.field);
      }
      n++;
    }
  } catch (err) {
    if (err instanceof UserError) throw err;
    return unusable(`cannot be read (${describeFsError(err)})`);
  } finally {
    lines.close();
    stream.destroy();
  }
  if (n === 0) return unusable("is empty");
  if (!ended) return unusable("is not whole (truncated: no last line)");
  return { previous: data, warnings: [] };
}

function issueText(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  const first = issues[0];
  return first ? `${first.path.map(String).join(".") || "(top)"}: ${first.message}` : "does not fit";
}
