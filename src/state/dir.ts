/**
 * The state dir on disk: one lock file while a run uses it (src/fs/lock.ts, the one lock of flowrules), one state
 * file replaced atomically (temp file, fsync, rename) at the end of a successful run, so a crash leaves the previous
 * state and two runs cannot interleave. A state file is used only when it is whole, of this format and verified
 * with this run's key (mac.ts); one of a newer format is neither used nor overwritten.
 */
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { mkdir, open, readdir, rm } from "node:fs/promises";
import { UserError } from "../model/errors.js";
import { errorMessage, isRecord } from "../model/guards.js";
import { acquireLock, describeTakeOver, LockHeldError, type HeldLock } from "../fs/lock.js";
import type { StateKey } from "./mac.js";
import { indexState, Newer, Unusable, type StateIndex } from "./reader.js";
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

/** How long the lock of a run on another host holds without a heartbeat (as apply's --lock-timeout). */
export const FOREIGN_LOCK_MS = 30 * 60_000;

function code(err: unknown): string {
  return isRecord(err) && typeof err.code === "string" ? err.code : "";
}

/**
 * Locks the state dir for this run, or throws one line naming the holder. The lock of a run that died is taken over;
 * a lock file an older flowrules left half-written is too (the dir is flowrules' own).
 */
export function lockStateDir(dir: string, dirArg: string, what: string): HeldLock {
  const file = join(dir, LOCK_FILE);
  try {
    const lock = acquireLock(file, {
      applying: what,
      timeoutMs: FOREIGN_LOCK_MS,
      unreadableIsStale: true,
      refuse: (owner, described) =>
        new LockHeldError(
          `the state dir ${dirArg} is in use by another flowrules run (${described})`,
          "try again when it has finished",
          owner,
          `the state dir ${dirArg} is in use by another flowrules run (pid ${owner.pid}${owner.host !== hostname() ? ` on ${owner.host}` : ""}, since ${owner.started_at}); try again when it has finished`,
        ),
    });
    // a run on another host sharing the dir sees this one alive for as long as it runs, however long that is
    lock.startHeartbeat();
    return lock;
  } catch (err) {
    if (err instanceof UserError) throw err;
    // the folder exists (made or found) but its lock file cannot be created in it: /proc/1, /sys, a device
    const unusable = ["ENOENT", "EINVAL", "ENXIO"].includes(code(err));
    throw new UserError(
      `cannot use the state dir ${dirArg}: ${unusable ? "not a usable state directory (no file can be created in it)" : describeFsError(err)}`,
    );
  }
}

export function describeFsError(err: unknown): string {
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
    case "EFBIG":
      return "file too large (the file-size limit, ulimit -f)";
    case "EDQUOT":
      return "disk quota exceeded";
    case "EIO":
      return "input/output error";
    default:
      return errorMessage(err);
  }
}

/** Temporary state files of runs that died before their commit (the dir is locked: no live run writes one). */
async function dropLeftovers(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    // removing a name never follows it, were it a link
    if (name.startsWith(`${STATE_FILE}.`) && name.endsWith(".tmp"))
      await rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}

/**
 * Opens (creating it if needed) and locks a state dir for a run against `baseUrl` with `key`. Fails with one line,
 * before any request, when the dir cannot be written, is in use, or was made for another base URL. A state file that
 * cannot be read in full, was made with another key or does not verify is reported in `warnings` and not used; one
 * of a newer format is reported and left as it is (the run writes no state). `warn` says later, once, that the file
 * changed while the run used it (its lines then come from the service).
 */
export async function openStateDir(
  dirArg: string,
  baseUrl: string,
  key: StateKey,
  warn: (message: string) => void = () => undefined,
): Promise<OpenedState> {
  const dir = resolve(dirArg);
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new UserError(`cannot use the state dir ${dirArg}: ${describeFsError(err)}`);
  }
  const lock = lockStateDir(dir, dirArg, "a run with --state");
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
      lock.release();
    }
  };
  try {
    await dropLeftovers(dir);
    const read = await readState(dir, dirArg, baseUrl, key);
    previous = read.previous;
    if (previous) {
      const shown = join(dirArg, STATE_FILE);
      previous.onChanged = () =>
        warn(
          `state: ${shown} changed while this run used it: its lines that changed are not used, the service answers them`,
        );
    }
    // a killed run's lock, taken over: said once, as apply says it
    const tookOver = lock.tookOver ? [`state: ${describeTakeOver(join(dirArg, LOCK_FILE), lock.tookOver)}`] : [];
    return {
      dir,
      previous,
      warnings: [...tookOver, ...read.warnings],
      release,
      startWriting(header) {
        writer = new StateWriter(dir, header, {
          describe: describeFsError,
          key,
          shown: join(dirArg, STATE_FILE),
          ...(read.keep !== undefined ? { keep: read.keep } : {}),
        });
        return writer;
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

interface ReadState {
  previous: StateIndex | undefined;
  warnings: string[];
  /** set: the file is left as it is (written by a newer flowrules); why, for the run's last word */
  keep?: string;
}

async function readState(dir: string, dirArg: string, baseUrl: string, key: StateKey): Promise<ReadState> {
  const file = join(dir, STATE_FILE);
  const shown = join(dirArg, STATE_FILE);
  const unusable = (why: string): ReadState => ({
    previous: undefined,
    warnings: [`state: ${shown} ${why}: this run reads everything and rewrites it`],
  });
  let fh;
  try {
    fh = await open(file, "r");
  } catch (err) {
    if (code(err) === "ENOENT") return { previous: undefined, warnings: [] };
    return unusable(`cannot be read (${describeFsError(err)})`);
  }
  try {
    const index = await indexState(fh, { dirArg, baseUrl, key });
    if (index.header.key_digest !== key.id) throw new Unusable("was made with another API key");
    if (index.authentic !== true)
      throw new Unusable("does not verify (edited, cut, or not written by flowrules with this API key)");
    return { previous: index, warnings: [] };
  } catch (err) {
    await fh.close();
    if (err instanceof UserError) throw err;
    if (err instanceof Newer) {
      return {
        previous: undefined,
        warnings: [`state: ${shown} ${err.message}: this run reads everything and leaves the file as it is`],
        keep: `the state dir ${dirArg} was written by a newer flowrules: left as it is`,
      };
    }
    if (err instanceof Unusable) return unusable(err.message);
    return unusable(`cannot be read (${describeFsError(err)})`);
  }
}
