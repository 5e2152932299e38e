/**
 * `flowrules state show` and `flowrules state clear` (docs/operating.md, "State between runs"): what a state dir holds,
 * read without changing anything, and removing it under its lock. Plain data out; the views are in src/render/state.
 */
import { createReadStream, existsSync } from "node:fs";
import { lstat, open, readdir, rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { UserError } from "../model/errors.js";
import { isRecord } from "../model/guards.js";
import { acquireLock, describeOwner, LockHeldError, readOwner, staleness, type HeldLock } from "../fs/lock.js";
import { describeFsError, FOREIGN_LOCK_MS, lockStateDir } from "./dir.js";
import { stateKey } from "./mac.js";
import { indexState, Newer, Unusable, type StateIndex } from "./reader.js";
import { LOCK_FILE, STATE_FILE, STATE_FORMAT } from "./schema.js";

/** The watcher's lock in a state dir (docs/watch.md): `state clear` refuses while a watcher holds it. */
const WATCH_LOCK = join("watch", "lock");

export interface WorkflowReport {
  workflow: number;
  /** the `now` of the last run that read it: changes are listed from here, less the lookback */
  bookmark: string | null;
  /** newest last_updated_time seen */
  newest_seen: string | null;
  /** its last full read (older than --resync-after: read in full again); null while its first sync is partial */
  last_full_read: string | null;
  /** its first sync is not finished (docs/operating.md, "A first sync over several runs"): instances in, of about how many */
  partial?: { synced: number; total: number | null };
  /** distinct instances the state holds anything of (list element, record or field value) */
  instances: number;
  records: number;
  field_values: number;
  listings: number;
}

export interface LockReport {
  file: string;
  /** the owner in words */
  holder: string;
  /** why it no longer holds (its owner is gone): the next run takes it over; null while it holds */
  stale: string | null;
}

export interface StateReport {
  dir: string;
  file: string;
  /** bytes of the state file, or null when there is none */
  size_bytes: number | null;
  /** null: read and checked in full; else why it cannot be used */
  unusable: string | null;
  /** written by a newer flowrules: left as it is by this one */
  newer: boolean;
  format_version: number | null;
  flowrules_version: string | null;
  base_url: string | null;
  written_at: string | null;
  run_at: string | null;
  /** whether its MAC verifies with the current API key; null: not checked (no key) */
  verifies: boolean | null;
  /** whether it was made with the current API key; null: not known (no key, or no header) */
  same_key: boolean | null;
  workflows: WorkflowReport[];
  locks: LockReport[];
  /** temporary files of runs that died before their commit (removed by the next run) */
  leftovers: number;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** The header line alone (a file that cannot be read in full still says who wrote it). */
async function headerOf(file: string): Promise<Record<string, unknown> | undefined> {
  const stream = createReadStream(file, { encoding: "utf8", highWaterMark: 64 * 1024 });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      try {
        const raw: unknown = JSON.parse(line);
        return isRecord(raw) ? raw : undefined;
      } catch {
        return undefined;
      }
    }
    return undefined;
  } finally {
    lines.close();
    stream.destroy();
  }
}

function lockReport(file: string, now: number): LockReport | undefined {
  if (!existsSync(file)) return undefined;
  const owner = readOwner(file);
  if (!owner)
    return { file, holder: "an unknown owner (the lock file is unreadable)", stale: "its content is not a whole lock" };
  return { file, holder: describeOwner(owner, now), stale: staleness(owner, FOREIGN_LOCK_MS, now) ?? null };
}

/** Counts per workflow, from the index (list elements' ids kept by the reader's pass: no line is read again). */
function workflowsOf(index: StateIndex): WorkflowReport[] {
  const per = new Map<number, { ids: Set<number>; records: number; values: number; listings: number }>();
  const of = (pid: number): { ids: Set<number>; records: number; values: number; listings: number } => {
    let w = per.get(pid);
    if (!w) per.set(pid, (w = { ids: new Set(), records: 0, values: 0, listings: 0 }));
    return w;
  };
  for (const r of index.records.values()) {
    const w = of(r.process_id);
    w.records++;
    w.ids.add(r.id);
  }
  for (const [key, values] of index.fields) {
    const w = of(Number(key.split(":")[0]));
    w.values += values.size;
    for (const id of values.keys()) w.ids.add(id);
  }
  for (const l of index.listings.values()) {
    const w = of(l.process_id);
    w.listings++;
    for (const id of index.elementIds?.get(l) ?? []) w.ids.add(id);
  }
  for (const pid of Object.keys(index.marks)) of(Number(pid));
  return [...per.entries()]
    .sort(([a], [b]) => a - b)
    .map(([pid, w]) => {
      const mark = index.marks[String(pid)];
      return {
        workflow: pid,
        bookmark: mark?.run_at ?? null,
        newest_seen: mark?.newest_seen ?? null,
        last_full_read: mark?.partial ? null : (mark?.synced_at ?? null),
        ...(mark?.partial ? { partial: { synced: mark.synced ?? 0, total: mark.total ?? null } } : {}),
        instances: w.ids.size,
        records: w.records,
        field_values: w.values,
        listings: w.listings,
      };
    });
}

/** What the state dir holds, read without changing anything (no lock taken: the state file is only ever renamed into place). */
export async function describeStateDir(
  dirArg: string,
  apiKey: string | undefined,
  now = Date.now(),
): Promise<StateReport> {
  const dir = resolve(dirArg);
  const file = join(dir, STATE_FILE);
  const shownFile = join(dirArg, STATE_FILE);
  try {
    if (!(await stat(dir)).isDirectory()) throw new UserError(`the state dir ${dirArg} is not a directory`);
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(
      `cannot read the state dir ${dirArg}: ${(err as { code?: string }).code === "ENOENT" ? "it does not exist" : describeFsError(err)}`,
    );
  }
  const names = await readdir(dir);
  const report: StateReport = {
    dir: dirArg,
    file: shownFile,
    size_bytes: null,
    unusable: null,
    newer: false,
    format_version: null,
    flowrules_version: null,
    base_url: null,
    written_at: null,
    run_at: null,
    verifies: null,
    same_key: null,
    workflows: [],
    locks: [lockReport(join(dir, LOCK_FILE), now), lockReport(join(dir, WATCH_LOCK), now)]
      .filter((l): l is LockReport => l !== undefined)
      .map((l) => ({ ...l, file: l.file.replace(dir, dirArg) })),
    leftovers: names.filter((n) => n.startsWith(`${STATE_FILE}.`) && n.endsWith(".tmp")).length,
  };
  if (!names.includes(STATE_FILE)) return report;
  const key = apiKey ? stateKey(apiKey) : undefined;
  let fh;
  try {
    report.size_bytes = (await lstat(file)).size;
    const header = await headerOf(file);
    report.format_version = typeof header?.format_version === "number" ? header.format_version : null;
    report.flowrules_version = str(header?.flowrules_version);
    report.base_url = str(header?.base_url);
    report.written_at = str(header?.written_at);
    report.run_at = str(header?.run_at);
    if (key && header && "key_digest" in header) report.same_key = header.key_digest === key.id;
    fh = await open(file, "r");
  } catch (err) {
    report.unusable = `cannot be read (${describeFsError(err)})`;
    return report;
  }
  try {
    const index = await indexState(fh, { dirArg, elementIds: true, ...(key ? { key } : {}) });
    report.verifies = index.authentic ?? null;
    report.workflows = workflowsOf(index);
    if (report.same_key === false) report.unusable = "was made with another API key";
    else if (report.verifies === false)
      report.unusable = "does not verify (edited, cut, or not written by flowrules with this API key)";
  } catch (err) {
    if (err instanceof Newer) report.newer = true;
    if (err instanceof Unusable) report.unusable = err.message;
    else throw err;
  } finally {
    await fh.close();
  }
  return report;
}

export interface ClearReport {
  dir: string;
  /** files removed, with their sizes */
  removed: Array<{ file: string; bytes: number }>;
}

/** A name flowrules writes into a state dir, and what it must be to be flowrules' own. */
function ownName(name: string): "state" | "temp" | "lock" | "watch" | undefined {
  if (name === STATE_FILE) return "state";
  if (name.startsWith(`${STATE_FILE}.`) && name.endsWith(".tmp")) return "temp";
  // the lock, its claims and the temporary files it is linked from (src/fs/lock.ts)
  if (name === LOCK_FILE || name.startsWith(`${LOCK_FILE}.`)) return "lock";
  if (name === "watch") return "watch";
  return undefined;
}

/** Whether a file begins with a state header flowrules writes (`{"format":"flowrules-state",…}`); an empty one may be a temp file just made. */
async function startsAsState(path: string, emptyIsOurs: boolean): Promise<boolean> {
  const fh = await open(path, "r");
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    if (bytesRead === 0) return emptyIsOurs;
    const line = buf.subarray(0, bytesRead).toString("utf8").split("\n")[0] ?? "";
    try {
      const header: unknown = JSON.parse(line);
      return isRecord(header) && header.format === STATE_FORMAT;
    } catch {
      return false;
    }
  } finally {
    await fh.close();
  }
}

/**
 * The files `state clear` removes, judged before any is: the folder must be a state dir (only names flowrules
 * writes there) and each file one flowrules wrote (a regular file; the state and its temp files starting with a
 * state header). Anything else is one line and nothing is removed — a folder that is not a state dir lost its
 * files with state-like names, and a folder at one of those names stopped the removal half-way.
 */
async function filesToClear(
  dir: string,
  dirArg: string,
  withLock: boolean,
): Promise<Array<{ name: string; bytes: number }>> {
  const refuse = (why: string): UserError => new UserError(`not clearing ${dirArg}: ${why}; nothing was removed`);
  const names = await readdir(dir);
  const foreign = names.filter((n) => ownName(n) === undefined);
  if (foreign.length > 0) {
    const shown = foreign
      .slice(0, 3)
      .map((n) => JSON.stringify(n))
      .join(", ");
    throw refuse(
      `it is not a state dir flowrules wrote (it holds ${shown}${foreign.length > 3 ? ` and ${foreign.length - 3} more` : ""})`,
    );
  }
  const files: Array<{ name: string; bytes: number }> = [];
  for (const name of names) {
    const kind = ownName(name);
    const st = await lstat(join(dir, name));
    if (kind === "watch") {
      if (!st.isDirectory()) throw refuse(`${name} is not the watcher's folder`);
      continue;
    }
    if (!st.isFile()) throw refuse(`${name} is not a regular file`);
    // the run's own lock is removed by its release, not here; a lock being made by another run is left alone
    if (kind === "lock" && (!name.startsWith(`${LOCK_FILE}.claim.`) || !withLock)) continue;
    if ((kind === "state" || kind === "temp") && !(await startsAsState(join(dir, name), kind === "temp"))) {
      throw refuse(`${name} is not a state flowrules wrote`);
    }
    files.push({ name, bytes: st.size });
  }
  return files;
}

/**
 * Removes the state's files (the state file, temporary files of dead runs) under the dir's lock, so the next run
 * with state reads everything. Refuses, in one line, while a run holds the dir or a watcher runs on it, and for a
 * folder that is not a state dir (filesToClear). The watcher's journals (`watch/`) are kept: they are what makes a
 * killed watcher send nothing twice.
 */
export async function clearStateDir(dirArg: string): Promise<ClearReport> {
  const dir = resolve(dirArg);
  if (!existsSync(dir)) return { dir: dirArg, removed: [] };
  if (!(await stat(dir)).isDirectory())
    throw new UserError(`not clearing ${dirArg}: it is not a folder; nothing was removed`);
  // judged before the lock too: a folder that is not a state dir gets no lock file either
  await filesToClear(dir, dirArg, false);
  let watcher: HeldLock | undefined;
  if (existsSync(join(dir, "watch"))) {
    watcher = acquireLock(join(dir, WATCH_LOCK), {
      applying: "state clear",
      timeoutMs: FOREIGN_LOCK_MS,
      refuse: (owner, described) =>
        new LockHeldError(
          `a watcher uses the state dir ${dirArg} (${described})`,
          "stop it first",
          owner,
          `a watcher uses the state dir ${dirArg} (${described}); stop it first, then clear the state`,
        ),
    });
  }
  try {
    const lock = lockStateDir(dir, dirArg, "state clear");
    try {
      const removed: ClearReport["removed"] = [];
      for (const { name, bytes } of await filesToClear(dir, dirArg, true)) {
        // removing a name never follows it, were it a link
        await rm(join(dir, name), { force: true });
        removed.push({ file: join(dirArg, name), bytes });
      }
      return { dir: dirArg, removed };
    } finally {
      lock.release();
    }
  } finally {
    watcher?.release();
  }
}
