/**
 * The state dir on disk: one lock file while a run uses it, one state file replaced atomically (temp file, fsync,
 * rename) at the end of a successful run, so a crash leaves the previous state and two runs cannot interleave.
 */
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { mkdir, open, readFile, rm } from "node:fs/promises";
import { UserError } from "../model/errors.js";
import { errorMessage, isRecord } from "../model/guards.js";
import { indexState, Unusable, type StateIndex } from "./reader.js";
import { LOCK_FILE, STATE_FILE, type StateHeader } from "./schema.js";
import { StateWriter } from "./writer.js";

export interface OpenedState {
  dir: string;
  /** the last run's state, when there is one that can be used in full: indexed, read line by line as it is used */
  previous: StateIndex | undefined;
  /** one line each: why the previous state is not used */
  warnings: string[];
  /** starts the next state file (a temporary file until it is committed) */
  startWriting(header: StateHeader): StateWriter;
  /** closes the previous state, drops an uncommitted next one, removes the lock (idempotent) */
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
    case "ENOENT":
    case "EINVAL":
    case "ENXIO":
      // the folder exists (it was just made or found) but no file can be created in it: /proc/1, /sys, a device
      return "not a usable state directory (no file can be created in it)";
    default:
      return errorMessage(err);
  }
}

/**
 * Opens (creating it if needed) and locks a state dir for a run against `baseUrl` with the key of `keyDigest`. Fails
 * with one line, before any request, when the dir cannot be written, is in use, or was made for another base URL. A
 * state file that cannot be read in full, or was made with another key, is reported in `warnings` and not used.
 */
export async function openStateDir(dirArg: string, baseUrl: string, keyDigest: string | null): Promise<OpenedState> {
  const dir = resolve(dirArg);
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new UserError(`cannot use the state dir ${dirArg}: ${describeFsError(err)}`);
  }
  const lock = await takeLock(dir);
  let released = false;
  let previous: StateIndex | undefined;
  let writer: StateWriter | undefined;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    try {
      await previous?.close();
      await writer?.discard();
    } finally {
      await rm(lock, { force: true });
    }
  };
  try {
    const read = await readState(dir, dirArg, baseUrl, keyDigest);
    previous = read.previous;
    return {
      dir,
      previous,
      warnings: read.warnings,
      release,
      startWriting(header) {
        writer = new StateWriter(dir, header, describeFsError);
        return writer;
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

async function readState(dir: string, dirArg: string, baseUrl: string, keyDigest: string | null): Promise<{ previous: StateIndex | undefined; warnings: string[] }> {
  const file = join(dir, STATE_FILE);
  const shown = join(dirArg, STATE_FILE);
  const unusable = (why: string): { previous: undefined; warnings: string[] } => ({ previous: undefined, warnings: [`state: ${shown} ${why}: this run reads everything and rewrites it`] });
  let fh;
  try {
    fh = await open(file, "r");
  } catch (err) {
    if (code(err) === "ENOENT") return { previous: undefined, warnings: [] };
    return unusable(`cannot be read (${describeFsError(err)})`);
  }
  try {
    return { previous: await indexState(fh, dirArg, baseUrl, keyDigest), warnings: [] };
  } catch (err) {
    await fh.close();
    if (err instanceof UserError) throw err;
    if (err instanceof Unusable) return unusable(err.message);
    return unusable(`cannot be read (${describeFsError(err)})`);
  }
}
