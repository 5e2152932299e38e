/**
 * Who holds a lock and whether that owner is gone (the judging half of ./lock.ts, which takes, refreshes and
 * releases): the owner as the lock file says, and staleness by pid, process start time and token on this host, by
 * heartbeat elsewhere (docs/safety.md, "Locking").
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { z } from "zod";

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

/** Formats a duration for messages: "45 s", "12 min", "3 h 5 min". */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

export function parseOwner(raw: Buffer): LockOwner | undefined {
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

export function readRaw(file: string): Buffer | undefined {
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

export function errCode(err: unknown): string | undefined {
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

/** Tokens of the locks this process holds or is taking: a lock naming our pid is ours only with one of these. */
export const ourTokens = new Set<string>();

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
export function ownStart(): string | undefined {
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
