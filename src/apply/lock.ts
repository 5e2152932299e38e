/**
 * The apply lock: one file, created exclusively, so two schedules never apply at once. It holds its owner (pid,
 * host, start time, what it applies, a random token) and a heartbeat: while the owner runs it rewrites the file every
 * few seconds with the time and its progress. A lock is stale — and taken over, with a message — only when its
 * owner is gone: on this very host, when its pid no longer runs (a kill -9 leaves the file behind); elsewhere, when
 * its heartbeat stopped for longer than the timeout. A live owner on this host is never taken over, however long it
 * has run: an apply of 100,000 changes under the production rate limit takes most of a day.
 *
 * Creation is atomic with its content: the owner is written to a private temp file which is then hard-linked to the
 * lock path (link fails when the path exists), so nobody ever reads a half-written lock. Take-over renames the stale
 * file away first (only one contender can rename it) and checks it renamed the lock it judged stale.
 */
import { randomBytes } from "node:crypto";
import { linkSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { z } from "zod";
import { UserError } from "../model/errors.js";

/** Refusal because a live apply holds the lock: a run may wait for it (`--lock-wait`) instead of failing at once. */
export class LockHeldError extends UserError {
  constructor(
    /** who holds it and how far it got, in words */
    readonly holder: string,
    advice: string,
  ) {
    super(`${holder}. ${advice}`);
  }
}

/** Where the lock lives, relative to the working directory (`--lock-file` changes it). */
export { DEFAULT_LOCK_FILE } from "../model/settings.js";

const OwnerSchema = z.object({
  pid: z.number().int(),
  host: z.string(),
  started_at: z.string(),
  applying: z.string(),
  token: z.string(),
  /** refreshed while the owner runs (absent in locks of older versions: their start time stands in) */
  heartbeat_at: z.string().optional(),
  /** what the owner has done so far, in words ("1,234 of 5,000 changes done") */
  progress: z.string().optional(),
});
export type LockOwner = z.infer<typeof OwnerSchema>;

export interface LockOptions {
  /** what this run applies, shown to a second run ("plan.json", "rules/ (auto-approve)") */
  applying: string;
  /** a lock of another host whose heartbeat stopped this long ago is stale */
  timeoutMs: number;
  now?: () => number;
}

export interface TakeOver {
  owner: LockOwner | undefined;
  why: string;
}

/** Formats a duration for messages: "45 s", "12 min", "3 h 5 min". */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** How often the owner refreshes its lock. */
export const HEARTBEAT_MS = 10_000;

export class HeldLock {
  private released = false;
  private readonly onExit = (): void => this.release();
  private timer: NodeJS.Timeout | undefined;
  private progress: (() => string) | undefined;

  constructor(
    readonly file: string,
    readonly owner: LockOwner,
    /** set when a stale lock was taken over */
    readonly tookOver: TakeOver | undefined,
    private readonly now: () => number = Date.now,
  ) {
    // a last resort for exits that skip our finally blocks (process.exit in a signal handler)
    process.once("exit", this.onExit);
  }

  /** Still ours? (a human who sat on a prompt past the timeout may have lost it to a take-over) */
  stillHeld(): boolean {
    return !this.released && readOwner(this.file)?.token === this.owner.token;
  }

  /**
   * Refreshes the lock every `everyMs` while the process runs (the timer does not keep it alive). The file is
   * replaced by a rename, so a reader sees either the old or the new content, never half of it.
   */
  startHeartbeat(everyMs = HEARTBEAT_MS): void {
    if (this.timer || this.released) return;
    this.timer = setInterval(() => this.beat(), everyMs);
    this.timer.unref();
  }

  /**
   * What this run has done so far, shown to a run that finds the lock held; put into words with the next heartbeat
   * only (it changes with every change settled).
   */
  setProgress(text: string | (() => string)): void {
    this.progress = typeof text === "string" ? () => text : text;
  }

  /** Writes the heartbeat now. False when the lock is no longer ours (then it is left alone). */
  beat(): boolean {
    if (this.released || !this.stillHeld()) return false;
    const next: LockOwner = { ...this.owner, heartbeat_at: new Date(this.now()).toISOString(), ...(this.progress ? { progress: this.progress() } : {}) };
    const tmp = `${this.file}.${this.owner.pid}.${this.owner.token}.beat`;
    try {
      writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o644 });
      renameSync(tmp, this.file);
      return true;
    } catch {
      // a full disk must not stop the apply; the pid still proves the owner alive on this host
      try {
        unlinkSync(tmp);
      } catch {
        // not written
      }
      return false;
    }
  }

  /** Removes the lock file if it is still ours. Synchronous, so it works in an exit handler. Idempotent. */
  release(): void {
    if (this.released) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.released = true;
    process.removeListener("exit", this.onExit);
    try {
      if (readOwner(this.file)?.token === this.owner.token) unlinkSync(this.file);
    } catch {
      // already gone
    }
  }
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const parsed = OwnerSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function errCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}

/** Whether a pid runs on this host (EPERM: it runs, under another user). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errCode(err) === "EPERM";
  }
}

/**
 * Why the file at the lock path is not a lock flowrules wrote, or undefined when it is one. A lock is a regular file
 * holding an owner, and never half-written (see above), so anything else — a notes file, a plan or rule file given as
 * `--lock-file` by mistake, a directory, a symbolic link, a device — is someone else's and is never removed (issue 28).
 */
function notALock(file: string): string | undefined {
  let kind: string | undefined;
  try {
    const st = lstatSync(file);
    kind = st.isFile() ? undefined : st.isDirectory() ? "a directory" : st.isSymbolicLink() ? "a symbolic link" : "not a regular file";
  } catch (err) {
    if (errCode(err) === "ENOENT") return undefined; // gone meanwhile: the caller tries again
    return `it cannot be read (${errCode(err) ?? "error"})`;
  }
  if (kind) return `it is ${kind}`;
  if (!readOwner(file)) return "its content is not a flowrules lock";
  return undefined;
}

/** Why a lock is stale, or undefined when it must be respected. */
function staleness(owner: LockOwner, opts: LockOptions, now: number): string | undefined {
  if (owner.host === hostname()) {
    // on this host the process table is the truth: alive means held, whatever the age of the heartbeat
    if (owner.pid === process.pid || pidAlive(owner.pid)) return undefined;
    return `its process ${owner.pid} is gone`;
  }
  const beat = Date.parse(owner.heartbeat_at ?? owner.started_at);
  if (!Number.isNaN(beat) && now - beat > opts.timeoutMs) {
    return owner.heartbeat_at
      ? `its heartbeat stopped ${age(now - beat)} ago, beyond the lock timeout of ${age(opts.timeoutMs)}`
      : `it is ${age(now - beat)} old without a heartbeat, beyond the lock timeout of ${age(opts.timeoutMs)}`;
  }
  return undefined;
}

function describe(owner: LockOwner | undefined, now: number): string {
  if (!owner) return "an unknown owner (the lock file is unreadable)";
  const started = Date.parse(owner.started_at);
  const since = Number.isNaN(started) ? owner.started_at : `${age(now - started)} ago`;
  const beat = owner.heartbeat_at ? Date.parse(owner.heartbeat_at) : Number.NaN;
  const alive = Number.isNaN(beat) ? "" : `, last heartbeat ${age(now - beat)} ago`;
  const progress = owner.progress ? `, ${owner.progress}` : "";
  return `pid ${owner.pid} on ${owner.host}, started ${since}, applying ${owner.applying}${progress}${alive}`;
}

/**
 * Takes the lock or throws a UserError naming its owner and age. A stale lock is taken over (reported in
 * `tookOver`, for the caller to say so).
 */
export function acquireLock(file: string, opts: LockOptions): HeldLock {
  const now = opts.now ?? Date.now;
  mkdirSync(dirname(file), { recursive: true });
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date(now()).toISOString(),
    applying: opts.applying,
    token: randomBytes(12).toString("hex"),
  };
  const tmp = `${file}.${process.pid}.${owner.token}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o644 });
  let tookOver: TakeOver | undefined;
  try {
    for (let round = 0; round < 5; round++) {
      try {
        linkSync(tmp, file);
        return new HeldLock(file, owner, tookOver, now);
      } catch (err) {
        if (errCode(err) !== "EEXIST") throw err;
      }
      const foreign = notALock(file);
      if (foreign !== undefined) {
        throw new UserError(`${file} is not a lock flowrules wrote (${foreign}), so it is left alone: pass another --lock-file, or remove the file yourself if nothing else uses it`);
      }
      const current = readOwner(file);
      if (!current) continue; // removed or replaced meanwhile: try again
      const why = staleness(current, opts, now());
      if (why === undefined) {
        throw new LockHeldError(
          `another apply holds the lock ${file}: ${describe(current, now())}`,
          `Wait for it to finish (or pass --lock-wait): a lock is taken over only when its process is gone (on this host) or its heartbeat stopped for --lock-timeout (${age(opts.timeoutMs)}, other hosts)`,
        );
      }
      // move the stale lock aside; only one contender can rename this very file
      const aside = `${file}.stale.${process.pid}.${owner.token}`;
      try {
        renameSync(file, aside);
      } catch (err) {
        if (errCode(err) === "ENOENT") continue; // someone else moved it: try again
        throw err;
      }
      const moved = readOwner(aside);
      if (moved?.token !== current.token) {
        // we moved a fresh lock that replaced the stale one meanwhile: put it back and re-judge
        try {
          linkSync(aside, file);
        } catch {
          // a third run got in between; it holds the lock now
        }
        unlinkSync(aside);
        continue;
      }
      unlinkSync(aside);
      tookOver = { owner: current, why };
    }
    throw new UserError(`could not take the lock ${file}: other runs keep taking it`);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // ignore
    }
  }
}

/** One line for the user about a take-over. */
export function describeTakeOver(file: string, t: TakeOver, now = Date.now()): string {
  return `took over the stale lock ${file} (${describe(t.owner, now)}): ${t.why}`;
}
