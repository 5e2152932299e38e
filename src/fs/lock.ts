/**
 * The one lock of flowrules (docs/safety.md, "Locking"): the apply lock, the journal's lock, the state dir's
 * `state.lock` and the watcher's lock are all taken here. A lock is one file, created exclusively, holding its owner
 * (pid, host, start time, what it does, a random token) and a heartbeat: while the owner runs it may rewrite the file
 * every few seconds with the time and its progress. A lock is stale — and taken over, with a message — only when its
 * owner is gone: on this very host, when its pid no longer runs (a kill -9 leaves the file behind), when it names
 * this process's own pid without a token this process made (a container's pid 1 restarted after a kill), or when its
 * pid now belongs to a program that started at another time than the owner (the pid was reused); elsewhere, when
 * its heartbeat (or, without one, its start) is older than the caller's timeout. A live owner on this host is never
 * taken over, however long it has run: an apply of 100,000 changes under the production rate limit takes most of a day.
 *
 * Creation is atomic with its content: the owner is written to a private temp file which is then hard-linked to the
 * lock path (link fails when the path exists), so nobody ever reads a half-written lock.
 *
 * Take-over is a claim, so that two runs that both judge one lock stale cannot both win: a run that judged the
 * content C stale creates `<lock>.claim.<digest of C>` exclusively (again by link). Only the run holding that claim
 * may remove the lock, and only after reading it again and finding C: nobody else can remove a file holding C (they
 * would need the same claim), a fresh lock never holds C (new token, new time), and creating never replaces a file,
 * so the file cannot change between that reading and the removal. Then every contender races for the free path with
 * link again; one wins, the others find a live owner. A claim whose holder died (killed in those few microseconds) is
 * itself stale and removed the same way, by a claim on it. test/fs/lock-race.test.ts races many processes for one
 * stale lock, round after round.
 */
import { createHash, randomBytes } from "node:crypto";
import { linkSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { UserError } from "../model/errors.js";
import {
  age,
  errCode,
  ourTokens,
  ownStart,
  parseOwner,
  readOwner,
  readRaw,
  staleness,
  describeOwner,
  type LockOwner,
} from "./lock-owner.js";

export { age, describeOwner, processStart, readOwner, staleness, type LockOwner } from "./lock-owner.js";

/** Refusal because a live owner holds the lock: a run may wait for it (`--lock-wait`) instead of failing at once. */
export class LockHeldError extends UserError {
  constructor(
    /** who holds it and how far it got, in words */
    readonly holder: string,
    advice: string,
    /** the owner as its lock file says */
    readonly owner?: LockOwner,
    /** the whole message, when the caller words it (the state dir does) */
    message?: string,
  ) {
    super(message ?? `${holder}. ${advice}`);
  }
}

export interface LockOptions {
  /** what this run does, shown to a second run ("plan.json", "rules/ (auto-approve)") */
  applying: string;
  /** a lock of another host whose heartbeat stopped this long ago is stale */
  timeoutMs: number;
  now?: () => number;
  /**
   * The refusal when a live owner holds the lock (default: an apply's words). `described` is the owner in words
   * ("pid 12 on host, started 3 min ago, applying plan.json").
   */
  refuse?: (owner: LockOwner, described: string) => LockHeldError;
  /**
   * A regular file at the lock path whose content is not an owner is stale (true) or someone else's, refused and
   * left alone (false, the default: a `--lock-file` given by mistake must never remove the file it names). Only for
   * a lock path flowrules alone names, inside a dir it owns (the state dir), where such a file is a lock an older
   * flowrules left half-written.
   */
  unreadableIsStale?: boolean;
}

export interface TakeOver {
  owner: LockOwner | undefined;
  why: string;
}

/** How often the owner refreshes its lock. */
export const HEARTBEAT_MS = 10_000;
/** A claim is held for microseconds; one of another host this old was left by a run that died holding it. */
const CLAIM_TIMEOUT_MS = 60_000;
/** How long a run waits, all told, while another takes over the same stale lock, before it gives up. */
const BUSY_WAIT_MS = 2_000;

export class HeldLock {
  private released = false;
  private readonly onExit = (): void => this.release();
  private timer: NodeJS.Timeout | undefined;
  private progress: (() => string) | undefined;

  constructor(
    readonly file: string,
    readonly owner: LockOwner & { token: string; applying: string },
    /** set when a stale lock was taken over */
    readonly tookOver: TakeOver | undefined,
    /** the run's clock (LockOptions.now): stamps the heartbeats as it stamped the start */
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
    const next: LockOwner = {
      ...this.owner,
      heartbeat_at: new Date(this.now()).toISOString(),
      ...(this.progress ? { progress: this.progress() } : {}),
    };
    const tmp = `${this.file}.${this.owner.pid}.${this.owner.token}.beat`;
    try {
      writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o644, flag: "wx" });
      renameSync(tmp, this.file);
      return true;
    } catch {
      // a full disk must not stop the run; the pid still proves the owner alive on this host
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
    ourTokens.delete(this.owner.token);
    try {
      if (readOwner(this.file)?.token === this.owner.token) unlinkSync(this.file);
    } catch {
      // already gone
    }
  }
}

/**
 * Why the file at the lock path is not a lock flowrules wrote, or undefined when it is one. A lock is a regular file
 * holding an owner, and never half-written (see above), so anything else — a notes file, a plan or rule file given as
 * `--lock-file` by mistake, a directory, a symbolic link, a device — is someone else's and is never removed.
 */
function notALock(file: string, unreadableIsStale: boolean): string | undefined {
  let kind: string | undefined;
  try {
    const st = lstatSync(file);
    kind = st.isFile()
      ? undefined
      : st.isDirectory()
        ? "a directory"
        : st.isSymbolicLink()
          ? "a symbolic link"
          : "not a regular file";
  } catch (err) {
    if (errCode(err) === "ENOENT") return undefined; // gone meanwhile: the caller tries again
    return `it cannot be read (${errCode(err) ?? "error"})`;
  }
  if (kind) return `it is ${kind}`;
  if (unreadableIsStale) return undefined;
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (err) {
    // released between the look and the read (a racing holder): not a verdict on the file, the caller tries again
    if (errCode(err) === "ENOENT") return undefined;
    return `it cannot be read (${errCode(err) ?? "error"})`;
  }
  if (!parseOwner(raw)) return "its content is not a flowrules lock";
  return undefined;
}

/** Waits without returning to the event loop (the lock is taken synchronously, also from exit paths). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Writes `owner` to a new private file beside `file` (never following a link), to be linked into place. */
function ownerFile(file: string, owner: LockOwner & { token: string }, suffix: string): string {
  const tmp = `${file}.${process.pid}.${owner.token}.${suffix}`;
  writeFileSync(tmp, `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o644, flag: "wx" });
  return tmp;
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}

type Removal = "removed" | "changed" | "busy";

/**
 * Removes `file` if it still holds exactly `content`, under the claim on that content (see the top of this file).
 * "changed": it holds something else now (or nothing); "busy": another run holds the claim and is alive.
 */
function removeHolding(
  file: string,
  content: Buffer,
  me: LockOwner & { token: string },
  now: number,
  depth: number,
): Removal {
  const claim = `${file}.claim.${createHash("sha256").update(content).digest("hex").slice(0, 16)}`;
  const tmp = ownerFile(claim, me, "tmp");
  try {
    for (let round = 0; round < 3; round++) {
      try {
        linkSync(tmp, claim);
      } catch (err) {
        if (errCode(err) !== "EEXIST") throw err;
        const other = readRaw(claim);
        if (other === undefined) continue; // released meanwhile
        const holder = parseOwner(other);
        if (holder && staleness(holder, CLAIM_TIMEOUT_MS, now) === undefined) return "busy";
        // its holder died in the middle of a take-over: its claim is stale, removed under a claim of its own
        if (depth >= 2)
          throw new UserError(
            `could not take over the stale lock ${file}: a take-over of it was left unfinished (${claim}); remove both files if no flowrules run uses them`,
          );
        if (removeHolding(claim, other, me, now, depth + 1) === "busy") return "busy";
        continue;
      }
      try {
        const current = readRaw(file);
        if (current === undefined || !current.equals(content)) return "changed";
        unlinkSync(file);
        return "removed";
      } finally {
        unlinkQuietly(claim);
      }
    }
    return "busy";
  } finally {
    unlinkQuietly(tmp);
  }
}

/**
 * Takes the lock or throws: a LockHeldError naming its live owner (`opts.refuse` words it), a UserError when the path
 * holds something that is not a lock. A stale lock is taken over (reported in `tookOver`, for the caller to say so).
 */
export function acquireLock(file: string, opts: LockOptions): HeldLock {
  const now = opts.now ?? Date.now;
  mkdirSync(dirname(file), { recursive: true });
  const owner = {
    pid: process.pid,
    host: hostname(),
    started_at: new Date(now()).toISOString(),
    applying: opts.applying,
    token: randomBytes(12).toString("hex"),
    ...(ownStart() !== undefined ? { process_start: ownStart() } : {}),
  };
  ourTokens.add(owner.token);
  let taken = false;
  const tmp = ownerFile(file, owner, "tmp");
  let tookOver: TakeOver | undefined;
  const busyUntil = Date.now() + BUSY_WAIT_MS;
  try {
    for (let round = 0; round < 1000; round++) {
      try {
        linkSync(tmp, file);
        taken = true;
        return new HeldLock(file, owner, tookOver, now);
      } catch (err) {
        if (errCode(err) !== "EEXIST") throw err;
      }
      const foreign = notALock(file, opts.unreadableIsStale === true);
      if (foreign !== undefined) {
        throw new UserError(
          `${file} is not a lock flowrules wrote (${foreign}), so it is left alone: pass another --lock-file, or remove the file yourself if nothing else uses it`,
        );
      }
      const raw = readRaw(file);
      if (raw === undefined) continue; // removed meanwhile: try again
      const current = parseOwner(raw);
      const why = current
        ? staleness(current, opts.timeoutMs, now())
        : "its content is not a whole lock (left by an older flowrules)";
      if (why === undefined && current) {
        const described = describeOwner(current, now());
        throw (
          opts.refuse?.(current, described) ??
          new LockHeldError(
            `another apply holds the lock ${file}: ${described}`,
            `Wait for it to finish (or pass --lock-wait): a lock is taken over only when its process is gone (on this host) or its heartbeat stopped for --lock-timeout (${age(opts.timeoutMs)}, other hosts)`,
            current,
          )
        );
      }
      const removal = removeHolding(file, raw, owner, now(), 0);
      if (removal === "removed") tookOver = { owner: current, why: why ?? "" };
      else if (removal === "busy") {
        // another run is taking this very lock over: it wins in a moment, and this one then finds it held
        if (Date.now() > busyUntil) break;
        pause(2);
      }
    }
    throw new UserError(`could not take the lock ${file}: other runs keep taking it`);
  } finally {
    unlinkQuietly(tmp);
    if (!taken) ourTokens.delete(owner.token);
  }
}

/** One line for the user about a take-over. */
export function describeTakeOver(file: string, t: TakeOver, now = Date.now()): string {
  return `took over the stale lock ${file} (${describeOwner(t.owner, now)}): ${t.why}`;
}
