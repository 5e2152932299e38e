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
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { linkSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { z } from "zod";
import { UserError } from "../model/errors.js";

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

const OwnerSchema = z.object({
  pid: z.number().int(),
  host: z.string(),
  started_at: z.string(),
  /** what the owner does ("plan.json", "watch rules/", "a run with --state"); absent in older state locks */
  applying: z.string().optional(),
  /** absent only in state locks of older versions */
  token: z.string().optional(),
  /** refreshed while the owner runs (absent in locks of older versions: their start time stands in) */
  heartbeat_at: z.string().optional(),
  /** what the owner has done so far, in words ("1,234 of 5,000 changes done") */
  progress: z.string().optional(),
  /**
   * When the owner's process started, as this host tells it (processStart below): a live pid whose start differs is
   * another program that took the pid over. Absent in locks of older versions and where the host cannot tell.
   */
  process_start: z.string().optional(),
});
export type LockOwner = z.infer<typeof OwnerSchema>;

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

function parseOwner(raw: Buffer): LockOwner | undefined {
  try {
    const value: unknown = JSON.parse(raw.toString("utf8"));
    // state locks of older versions said `since` for the start time
    const withStart =
      typeof value === "object" && value !== null && !("started_at" in value) && "since" in value
        ? { ...value, started_at: (value as { since: unknown }).since }
        : value;
    const parsed = OwnerSchema.safeParse(withStart);
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function readRaw(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** The owner a lock file names, or undefined (no file, or not a lock). */
export function readOwner(file: string): LockOwner | undefined {
  const raw = readRaw(file);
  return raw ? parseOwner(raw) : undefined;
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

/** Tokens of the locks this process holds or is taking: a lock naming our pid is ours only with one of these. */
const ourTokens = new Set<string>();

/**
 * When process `pid` started, as text that is equal for one process and differs for two that had the same pid one
 * after the other; undefined when the host cannot tell. Linux: field 22 of /proc/<pid>/stat (clock ticks since
 * boot, exact). Elsewhere: `ps -o lstart=` (to the second), spawned only when a live pid holds a lock.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // the command name (field 2) is in parentheses and may hold spaces and parentheses: fields 3… follow the last ")"
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = fields[22 - 3];
    if (ticks !== undefined && /^\d+$/.test(ticks)) return `${ticks} ticks after boot`;
  } catch {
    // no /proc (macOS, BSD) or not readable: ask ps
  }
  if (process.platform === "win32") return undefined;
  try {
    const out = execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 2000,
    }).trim();
    return out === "" ? undefined : out;
  } catch {
    return undefined;
  }
}

let ownStartCache: { value: string | undefined } | undefined;
/** This process's start (processStart), asked once. */
function ownStart(): string | undefined {
  ownStartCache ??= { value: processStart(process.pid) };
  return ownStartCache.value;
}

/** Why a lock is stale, or undefined when it must be respected (`timeoutMs`: for an owner on another host). */
export function staleness(owner: LockOwner, timeoutMs: number, now: number): string | undefined {
  if (owner.host === hostname()) {
    // our own pid: ours only with a token this process made; otherwise a process before us had the pid (a
    // container's entrypoint is pid 1 again after a kill -9, so is the killed watcher's lock)
    if (owner.pid === process.pid) {
      return owner.token !== undefined && ourTokens.has(owner.token)
        ? undefined
        : `it names this process's own pid ${owner.pid} without a token this process made (a process before this one had the pid, as a container's pid 1 has after a restart)`;
    }
    // on this host the process table is the truth: alive means held, whatever the age of the heartbeat — unless
    // the pid now belongs to a process that started after the owner (the pid was reused)
    if (!pidAlive(owner.pid)) return `its process ${owner.pid} is gone`;
    if (owner.process_start !== undefined) {
      const start = processStart(owner.pid);
      if (start !== undefined && start !== owner.process_start)
        return `its pid ${owner.pid} now belongs to another program (started ${start}, the owner started ${owner.process_start})`;
    }
    return undefined;
  }
  const beat = Date.parse(owner.heartbeat_at ?? owner.started_at);
  if (!Number.isNaN(beat) && now - beat > timeoutMs) {
    return owner.heartbeat_at
      ? `its heartbeat stopped ${age(now - beat)} ago, beyond the lock timeout of ${age(timeoutMs)}`
      : `it is ${age(now - beat)} old without a heartbeat, beyond the lock timeout of ${age(timeoutMs)}`;
  }
  return undefined;
}

/** The owner in words: "pid 12 on host, started 3 min ago, applying plan.json, 3 of 9 done, last heartbeat 5 s ago". */
export function describeOwner(owner: LockOwner | undefined, now: number): string {
  if (!owner) return "an unknown owner (the lock file is unreadable)";
  const started = Date.parse(owner.started_at);
  const since = Number.isNaN(started) ? owner.started_at : `${age(now - started)} ago`;
  const beat = owner.heartbeat_at ? Date.parse(owner.heartbeat_at) : Number.NaN;
  const alive = Number.isNaN(beat) ? "" : `, last heartbeat ${age(now - beat)} ago`;
  const progress = owner.progress ? `, ${owner.progress}` : "";
  const what = owner.applying ? `, applying ${owner.applying}` : "";
  return `pid ${owner.pid} on ${owner.host}, started ${since}${what}${progress}${alive}`;
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
