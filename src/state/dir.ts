/**
 * The state dir on disk: one lock file while a run uses it, one state file replaced atomically (temp file, fsync,
 * rename) at the end of a successful run, so a crash leaves the previous state and two runs cannot interleave.
 */
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { UserError } from "../model/errors.js";
import { errorMessage, isRecord } from "../model/guards.js";
import { LOCK_FILE, STATE_FILE, STATE_FORMAT, STATE_FORMAT_VERSION, StateSchema, type StateData } from "./schema.js";

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
      if (pid !== undefined && (host !== hostname() || alive(pid))) {
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
    return {
      dir,
      previous,
      warnings,
      release,
      write: async (data) => {
        const target = join(dir, STATE_FILE);
        const temp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
        const fh = await open(temp, "w", 0o644);
        try {
          await fh.writeFile(JSON.stringify(data));
          await fh.sync();
        } finally {
          await fh.close();
        }
        await rename(temp, target);
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

async function readState(dir: string, dirArg: string, baseUrl: string): Promise<{ previous: StateData | undefined; warnings: string[] }> {
  const file = join(dir, STATE_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if (code(err) === "ENOENT") return { previous: undefined, warnings: [] };
    return { previous: undefined, warnings: [`state: ${join(dirArg, STATE_FILE)} cannot be read (${describeFsError(err)}): this run reads everything and rewrites it`] };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { previous: undefined, warnings: [`state: ${join(dirArg, STATE_FILE)} is not whole JSON (truncated or corrupt): this run reads everything and rewrites it`] };
  }
  if (isRecord(raw) && typeof raw.base_url === "string" && raw.base_url !== baseUrl) {
    throw new UserError(`the state dir ${dirArg} was made for another service (${raw.base_url}), not ${baseUrl}: use another --state dir`);
  }
  if (!isRecord(raw) || raw.format !== STATE_FORMAT || raw.format_version !== STATE_FORMAT_VERSION) {
    const version = isRecord(raw) ? String(raw.format_version) : "?";
    return { previous: undefined, warnings: [`state: ${join(dirArg, STATE_FILE)} is in another state format (${version}, this flowrules writes ${STATE_FORMAT_VERSION}): this run reads everything and rewrites it`] };
  }
  const parsed = StateSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join(".")}: ${issue.message}` : "does not fit";
    return { previous: undefined, warnings: [`state: ${join(dirArg, STATE_FILE)} cannot be read in full (${where}): this run reads everything and rewrites it`] };
  }
  return { previous: parsed.data, warnings: [] };
}
