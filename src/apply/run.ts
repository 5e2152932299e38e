/**
 * Applying a loaded plan under its locks, as `apply plan.json`, `apply --auto-approve` and each cycle of `watch` do:
 * the run's lock is the caller's; the journal's own lock beside it, the journal, the client, the execution and the
 * journal's `finish` line are here, so the verbs share one copy (src/commands/apply.ts, src/watch/cycle.ts). What a
 * person sees of it — progress, change events, the summary, notifications — is the caller's: this module reports as
 * data and short progress lines (`say`), as execute.ts does.
 */
import { mkdir } from "node:fs/promises";
import { defined } from "../model/defined.js";
import { join } from "node:path";
import {
  clientFrom,
  type ApiClient,
  type ClientEvent,
  type ClientOptions,
  type ClientSettings,
  type RequestLimiter,
  type RequestStats,
} from "../api/index.js";
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_RECHECK_EVERY_MS,
  serviceName,
} from "../model/settings.js";
import { UserError } from "../model/errors.js";
import { pauseUnless } from "../model/abortable.js";
import { executePlan } from "./execute.js";
import { Journal } from "./journal.js";
import { acquireLock, describeTakeOver, LockHeldError, type HeldLock, type LockOptions } from "../fs/lock.js";
import { loadPlanForApply } from "./load.js";
import { countOutcomes, type ChangeOutcome } from "./outcome.js";
import type { ApplyProgress, StalenessCheck } from "./types.js";
import type { LoadedPlan } from "../plan/read.js";
import type { Plan, PlannedChange } from "../plan/types.js";
import { VERSION } from "../model/version.js";

/** How long to wait for a lock another live run holds (`apply --lock-wait`), and what to say meanwhile. */
export interface LockWait {
  /** 0 (the default): refuse at once */
  waitMs?: number;
  /** the wait as the user wrote it, for messages */
  waitText?: string;
  /** how the wait was asked for, named in the refusal ("--lock-wait") */
  how?: string;
  /** how often a waiting run looks at the lock again (default 2 s) */
  pollMs?: number;
  /** told once, when the wait begins */
  onWaiting?: (holder: string, waitText: string) => void;
  /** the run's stop signal: a wait ends at once when it aborts (nothing was changed) */
  signal?: AbortSignal;
}

/**
 * The lock, waiting up to `waitMs` while a live run holds it (looking again every couple of seconds); the holder is
 * named once, when the wait begins. Past the wait, the refusal says how long it waited.
 */
export async function acquireWaiting(file: string, lockOpts: LockOptions, wait: LockWait = {}): Promise<HeldLock> {
  const waitMs = wait.waitMs ?? 0;
  const until = Date.now() + waitMs;
  const text = wait.waitText ?? `${Math.round(waitMs / 1000)}s`;
  let waiting = false;
  for (;;) {
    try {
      return acquireLock(file, lockOpts);
    } catch (err) {
      if (!(err instanceof LockHeldError) || waitMs <= 0) throw err;
      const left = until - Date.now();
      if (left <= 0)
        throw new UserError(
          `${err.holder}; waited ${text} for it to finish${wait.how ? ` (${wait.how})` : ""}, nothing was changed`,
        );
      const stopped = (): UserError =>
        new UserError(
          `${err.holder}; stopped by ${String(wait.signal?.reason ?? "a signal")} while waiting for it to finish${wait.how ? ` (${wait.how})` : ""}, nothing was changed`,
        );
      if (wait.signal?.aborted) throw stopped();
      if (!waiting) wait.onWaiting?.(err.holder, text);
      waiting = true;
      await pauseUnless(Math.min(left, wait.pollMs ?? 2000), wait.signal);
      if (wait.signal?.aborted) throw stopped();
    }
  }
}

/**
 * The journal is the plan's memory of what was sent, so one run at a time may use it, whatever its working directory
 * or --lock-file (two applies of one plan from two directories sent changes twice). Its own lock beside
 * it, taken after the run's lock (always in this order, so two runs never wait on each other), works like that one:
 * a live holder is refused (or waited for), a dead one's lock is taken over.
 */
export function journalLockFile(journalFile: string): string {
  return `${journalFile}.lock`;
}

export interface LockedRunOptions {
  journalFile: string;
  /** the run's lock, held by the caller; its progress is kept up to date */
  lock: HeldLock;
  /** with the run's stop signal (`stop`): no change starts after it, those in flight finish and are journalled */
  connection: ClientSettings;
  /** the process's one rate budget */
  limiter: RequestLimiter;
  /** no change starts after this instant (epoch ms; --max-duration): the rest are deferred */
  deadline?: number;
  batchSize?: number;
  clockSkewMs?: number;
  recheckEveryMs?: number;
  /** the journal lock's staleness (as the run's) */
  lockTimeoutMs?: number;
  lockWait?: LockWait;
  profileName?: string;
  tuning?: {
    verifyDelayMs?: number;
    maxSendAttempts?: number;
    heartbeatMs?: number;
    client?: Partial<Omit<ClientOptions, "baseUrl" | "apiKey">>;
  };
  /** a file as messages name it (relative to the working directory when below it) */
  shown?: (file: string) => string;
  /** progress lines: what the run is doing (the caller decides whether they are shown) */
  say?: (line: string) => void;
  /** warnings about the journal or a lock taken over: always worth a line */
  warn?: (line: string) => void;
  onClientEvent?: (e: ClientEvent) => void;
  /**
   * the client changes are sent through, around the run's own: with `--state`, the state's, which writes our writes'
   * answers through (docs/operating.md, "State between runs"); reads still reach the service
   */
  sendThrough?: (client: ApiClient) => ApiClient;
  /** once per change, as its outcome is known */
  onOutcome?: (o: ChangeOutcome) => void;
  onProgress?: (p: ApplyProgress) => void;
  onCheck?: (check: StalenessCheck) => void;
}

/** What one run of a loaded plan came to. */
export interface AppliedRun {
  /** one per enforce change, in plan order */
  outcomes: ChangeOutcome[];
  /** changes of rules in audit: never sent */
  audit: PlannedChange[];
  stats: RequestStats;
  listedAsChanged: number;
  readToCheck: number;
  checks: StalenessCheck[];
  baseUrl: string;
}

/** Applies a loaded (checked) plan under the caller's lock: journal lock, journal, execution, `finish` line. */
export async function applyLoadedPlan(loaded: LoadedPlan, opts: LockedRunOptions): Promise<AppliedRun> {
  const shown = opts.shown ?? ((f: string) => f);
  const lockOpts = { applying: opts.lock.owner.applying, timeoutMs: opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS };
  const journalLock = await acquireWaiting(journalLockFile(opts.journalFile), lockOpts, opts.lockWait);
  try {
    journalLock.startHeartbeat(opts.tuning?.heartbeatMs);
    if (journalLock.tookOver)
      opts.warn?.(`flowrules: ${describeTakeOver(shown(journalLock.file), journalLock.tookOver)}`);
    return await applyJournalled(loaded, opts, shown);
  } finally {
    journalLock.release();
  }
}

async function applyJournalled(
  loaded: LoadedPlan,
  opts: LockedRunOptions,
  shown: (f: string) => string,
): Promise<AppliedRun> {
  const { journalFile } = opts;
  // changes of rules in audit are shown in plans and never sent: they leave here, counted apart
  const audit = loaded.plan.changes.filter((c) => c.audit === true);
  const plan =
    audit.length > 0 ? { ...loaded.plan, changes: loaded.plan.changes.filter((c) => c.audit !== true) } : loaded.plan;
  const instanceOf = new Map(plan.changes.map((c) => [c.id, c.instance_id]));
  const journal = Journal.open(journalFile, loaded.digest, (id) => instanceOf.get(id));
  instanceOf.clear(); // replayed: the journal needs it no more (one entry per change at 100,000 changes)
  const say = opts.say ?? (() => undefined);
  if (journal.skippedLines > 0)
    opts.warn?.(
      `flowrules: ignored ${journal.skippedLines} unreadable line(s) of the journal ${shown(journalFile)} (torn by a crash?)`,
    );
  if (journal.earlierRuns > 0) say(`resuming: the journal records ${journal.earlierRuns} earlier run(s) of this plan`);
  // a journal of another plan is no memory of this one: said, since a wrong --journal may hide a half-applied plan
  if (journal.earlierRuns === 0 && journal.otherPlanRuns > 0) {
    opts.warn?.(
      `flowrules: warning: the journal ${shown(journalFile)} records ${journal.otherPlanRuns} run(s) of other plans and none of this one; they are not taken into account`,
    );
  }

  const c = opts.connection;
  const client = clientFrom(c, {
    // no change waits for the rate window past --max-duration
    ...defined({ onEvent: opts.onClientEvent, notAfter: opts.deadline }),
    ...opts.tuning?.client,
    limiter: opts.limiter,
  });
  try {
    journal.start({ flowrules_version: VERSION, plan_file: loaded.file });
    say(
      `applying ${plan.changes.length} change${plan.changes.length === 1 ? "" : "s"} of ${shown(loaded.file)} to ${serviceName(client.baseUrl, opts.profileName)}${audit.length > 0 ? ` (${audit.length} in audit, not sent)` : ""}`,
    );
    let latest: ApplyProgress | undefined;
    opts.lock.setProgress(() =>
      latest
        ? `${latest.settled.toLocaleString("en-US")} of ${latest.total.toLocaleString("en-US")} changes settled`
        : "starting",
    );
    const result = await executePlan(opts.sendThrough ? opts.sendThrough(client) : client, plan, journal, {
      ...defined({ onOutcome: opts.onOutcome, signal: c.stop, deadline: opts.deadline, onCheck: opts.onCheck }),
      batchSize: opts.batchSize ?? DEFAULT_BATCH_SIZE,
      clockSkewMs: opts.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
      maxSendAttempts: opts.tuning?.maxSendAttempts ?? 3,
      verifyDelayMs: opts.tuning?.verifyDelayMs ?? 1000,
      concurrency: c.concurrency,
      progress: say,
      recheckEveryMs: opts.recheckEveryMs ?? DEFAULT_RECHECK_EVERY_MS,
      onProgress: (p) => {
        opts.onProgress?.(p);
        latest = p;
      },
    });
    const counts = countOutcomes(result.outcomes);
    journal.append({
      event: "finish",
      applied: counts.applied,
      stale: counts.stale,
      failed: counts.failed,
      not_acted: counts.not_acted,
      deferred: counts.deferred,
    });
    return {
      outcomes: result.outcomes,
      audit,
      stats: client.stats(),
      listedAsChanged: result.listedAsChanged,
      readToCheck: result.readToCheck,
      checks: result.checks,
      baseUrl: client.baseUrl,
    };
  } finally {
    journal.close();
    await client.close();
  }
}

/** Applies (or resumes, from its journal beside it) a plan file under the caller's lock, as `apply plan.json` does. */
export async function applyPlanFile(
  planFile: string,
  opts: Omit<LockedRunOptions, "journalFile">,
): Promise<AppliedRun & { loaded: LoadedPlan }> {
  const loaded = await loadPlanForApply(planFile, opts.connection.baseUrl, { compact: true });
  return { ...(await applyLoadedPlan(loaded, { ...opts, journalFile: `${planFile}.journal.jsonl` })), loaded };
}

/**
 * Applies a plan made in this process as `apply --auto-approve` does, under the caller's lock: written to
 * `<dir>/plan.json` (the journal beside it refers to it, a resume needs it), checked like a saved plan, then applied.
 * `watch` applies each cycle's plan through it: no second copy of applying.
 */
export async function applyPlanInDir(
  plan: Plan,
  dir: string,
  opts: Omit<LockedRunOptions, "journalFile">,
): Promise<AppliedRun & { loaded: LoadedPlan; planFile: string }> {
  const { writePlanFile } = await import("../plan/write.js");
  await mkdir(dir, { recursive: true });
  const planFile = join(dir, "plan.json");
  await writePlanFile(planFile, plan);
  return { ...(await applyPlanFile(planFile, opts)), planFile };
}
