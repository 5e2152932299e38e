/**
 * `flowrules apply`: executes a saved plan exactly once, or plans rules and applies them in one go.
 *
 *   apply plan.json                      every check before any request, then lock → journal → execute → summary
 *   apply [paths...] --auto-approve      lock → plan → save plan under .flowrules/runs/ → the same as above
 *   apply [paths...]   (on a terminal)   shows the plan and applies only after "yes"
 *
 * A plan file is told from rule paths by content (a JSON object with `format_version`), or by a .json name.
 */
import { mkdir } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import { clientFrom, sharedLimiter, type ClientOptions, type RequestLimiter } from "../api/index.js";
import { DEFAULT_LOCK_FILE, sendRatePerMin, serviceName, type ConnectionSettings } from "../model/settings.js";
import type { PlanRunOptions } from "./planning.js";
import { EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { DEFAULT_BATCH_SIZE } from "../apply/batches.js";
import { DEFAULT_RECHECK_EVERY_MS, executePlan } from "../apply/execute.js";
import type { ApplyProgress } from "../apply/types.js";
import { Journal } from "../apply/journal.js";
import { acquireLock, describeTakeOver, LockHeldError, type HeldLock, type LockOptions } from "../model/lock.js";
import { looksLikePlanFile, type LoadedPlan } from "../plan/read.js";
import { loadPlanForApply } from "../apply/load.js";
import { DEFAULT_CLOCK_SKEW_MS } from "../apply/staleness.js";
import { applyExitCode, countOutcomes, type ChangeOutcome } from "../apply/outcome.js";
import type { Plan } from "../plan/types.js";
import { APPLY_FORMATS, type ApplyFormat } from "../render/apply/index.js";
import { VERSION } from "../model/version.js";
import { shardOfPlan, type Shard } from "../plan/shard.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { logOutcomes } from "../render/events/apply.js";
import { progressView } from "../render/progress/index.js";
import { useColor, type CommandIO } from "../log/command-io.js";
import { sendNotification, type NotifySettings } from "./notify.js";
import { applyPayload } from "../render/notify/payload.js";
import { textSafe } from "../render/escape.js";
import { redactor } from "../log/redact.js";
import { errorMessage } from "../model/guards.js";

import { DEFAULT_LOCK_TIMEOUT_MS } from "../model/settings.js";
export { DEFAULT_LOCK_TIMEOUT_MS };
export const RUNS_DIR = ".flowrules/runs";

/** Asks the person at the terminal (stdin). */
export interface Confirm {
  /** stdin is a terminal */
  isTTY: boolean;
  ask(question: string): Promise<string>;
}

/**
 * `apply`'s options. With rule paths it plans with the same PlanRunOptions as `plan` (built from the same resolved
 * settings in src/cli), handed over whole, so every planning flag works alike on both verbs.
 */
export interface ApplyCommandOptions extends PlanRunOptions {
  paths: string[];
  autoApprove: boolean;
  /** journal file; default `<plan>.journal.jsonl` */
  journal?: string;
  batchSize?: number;
  /** default .flowrules/apply.lock under cwd */
  lockFile?: string;
  lockTimeoutMs?: number;
  clockSkewMs?: number;
  detailedExitcode: boolean;
  quiet: boolean;
  /** the result on stdout: text (default) or json (schemas/apply-result.schema.json) */
  format?: ApplyFormat;
  /** only these rules (rule paths only) */
  rules: string[];
  /** only the changes (saved plan) or selected instances (rule paths) with id % count === index (src/plan/shard.ts) */
  shard?: Shard;
  connection: ConnectionSettings;
  /** where .flowrules/ lives and relative paths resolve; default process.cwd() */
  cwd?: string;
  confirm?: Confirm;
  /** aborted on SIGINT/SIGTERM: no new request starts, the ones in flight finish and are journalled */
  signal?: AbortSignal;
  /** staleness is judged again at least this often while changes are sent (default 60 s) */
  recheckEveryMs?: number;
  /** no change starts after this long from the start of the run; the rest are deferred */
  maxDurationMs?: number;
  /** --max-duration as the user wrote it, for the summary */
  maxDurationText?: string;
  /** webhooks told at the end (--notify / FLOWRULES_NOTIFY_URL) */
  notify?: NotifySettings;
  /** --lock-wait: how long to wait for another apply's lock to free before refusing (default 0: refuse at once) */
  lockWaitMs?: number;
  /** --lock-wait as the user wrote it, for messages */
  lockWaitText?: string;
  /**
   * Timing no flag sets: the defaults suit the service (a read 1 s after an unknown outcome, 3 sends at most, a
   * heartbeat every 10 s); the library's callers may shorten them.
   */
  tuning?: {
    verifyDelayMs?: number;
    maxSendAttempts?: number;
    heartbeatMs?: number;
    /** how often a waiting run looks at the lock again (default 2 s) */
    lockPollMs?: number;
    client?: Partial<Omit<ClientOptions, "baseUrl" | "apiKey">>;
  };
}

type Mode = { kind: "plan"; file: string } | { kind: "rules"; paths: string[] };

async function detectMode(paths: string[], cwd: string): Promise<Mode> {
  const abs = paths.map((p) => resolve(cwd, p));
  const plans: string[] = [];
  for (const [i, p] of abs.entries()) {
    if ((await looksLikePlanFile(p)) || /\.json$/i.test(paths[i] ?? "")) plans.push(p);
  }
  if (plans.length === 0) return { kind: "rules", paths: abs };
  if (paths.length > 1) throw new UserError("a saved plan is applied on its own: flowrules apply plan.json (rule paths go without a plan file)");
  return { kind: "plan", file: plans[0] ?? "" };
}

/** A path for messages: relative to cwd when below it. */
function shown(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/**
 * With --format json a pipeline always gets one document on stdout: a run that stops before any change is settled
 * (a refused plan file, rules that do not load, the lock held, a cancelled confirmation) says so in it as
 * `not_applied`, with the reason, besides the usual line on stderr.
 */
export async function applyCommand(opts: ApplyCommandOptions, io: CommandIO): Promise<number> {
  if (opts.format !== "json") return applyRun(opts, io);
  let wrote = false;
  const watched: CommandIO = { ...io, stdout: (s) => ((wrote = true), io.stdout(s)) };
  const notApplied = (error: string): void => {
    if (wrote) return;
    const clean = redactor([opts.connection.apiKey])(error);
    io.stdout(APPLY_FORMATS.json({ kind: "not_applied", baseUrl: opts.connection.baseUrl, audit: [], error: clean }));
  };
  try {
    const code = await applyRun(opts, watched);
    notApplied("nothing was applied: see the messages on stderr");
    return code;
  } catch (err) {
    notApplied(errorMessage(err));
    throw err;
  }
}

async function applyRun(opts: ApplyCommandOptions, io: CommandIO): Promise<number> {
  const startedAt = new Date();
  const cwd = opts.cwd ?? process.cwd();
  // the run's time budget starts now: planning (with rule paths) counts against it too
  const deadline = opts.maxDurationMs === undefined ? undefined : Date.now() + opts.maxDurationMs;
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  // one process, one key, one budget: planning, sending, checks and retries all wait on the same limiter
  const limiter = opts.tuning?.client?.limiter ?? sharedLimiter(opts.connection, opts.tuning?.client?.rateLimitWindowMs);
  const runOpts = { ...opts, batchSize, startedAt, limiter, ...(deadline !== undefined ? { deadline } : {}) };
  const mode = await detectMode(opts.paths, cwd);
  if (mode.kind === "plan") {
    if (opts.rules.length > 0) throw new UserError("--rule selects rules to plan; a saved plan is applied as a whole");
    if (opts.changedSince !== undefined) throw new UserError("--changed-since selects rules to plan; a saved plan is applied as a whole");
    // every refusal (format, shape, digest, errors, base URL) happens here, before the lock and any request
    const checked = await loadPlanForApply(mode.file, opts.connection.baseUrl, { compact: true });
    const loaded = { ...checked, plan: shardOfPlan(checked.plan, opts.shard) };
    const journalFile = opts.journal ? resolve(cwd, opts.journal) : `${mode.file}.journal.jsonl`;
    return withLock(opts, cwd, `${shown(mode.file, cwd)} (${loaded.digest.slice(0, 19)}…)`, io, (lock) =>
      applyLoaded(loaded, journalFile, runOpts, cwd, io, lock),
    );
  }

  if (!opts.autoApprove && !opts.confirm?.isTTY) {
    throw new UserError(
      "refusing to apply rules without a review: there is no terminal to confirm on. Save a plan and apply it " +
        "(flowrules plan … --out plan.json, then flowrules apply plan.json), or pass --auto-approve",
    );
  }
  // loaded only here: applying a saved plan needs neither the rule compiler nor the planner, whose modules would
  // raise the heap every apply starts from (docs/performance.md, "Memory")
  const [{ loadPlanning, planLoaded }, { PLAN_FORMATS }, { writePlanFile }] = await Promise.all([
    import("./planning.js"),
    import("../render/plan/index.js"),
    import("../plan/write.js"),
  ]);
  const rules = await loadPlanning(mode.paths, opts, io);
  if (!rules) return EXIT_ERROR;
  const what = `${opts.paths.join(" ")}${opts.autoApprove ? " (auto-approve)" : ""}`;
  return withLock(opts, cwd, what, io, async (lock) => {
    // the same planning as `plan`: the run's planning settings, whole; one rate budget with the apply that follows
    const plan = await planLoaded(rules, opts.connection, io, { ...opts, limiter, recordSeen: true });
    if (plan.errors.length > 0) {
      for (const e of plan.errors) io.stderr(`plan error: ${textSafe(e.message)}\n`);
      io.stderr(`not applying: the plan failed (${plan.errors.length} error${plan.errors.length === 1 ? "" : "s"}); nothing was changed\n`);
      return EXIT_ERROR;
    }
    const audit = plan.changes.filter((c) => c.audit === true).length;
    if (plan.changes.length === audit) {
      io.stdout(APPLY_FORMATS[opts.format ?? "text"]({ kind: "nothing", baseUrl: plan.base_url, audit: plan.changes.filter((c) => c.audit === true) }));
      await sendNotification(opts.notify, applyPayload({ plan, outcomes: [], audit, planFile: "", journalFile: "" }, { startedAt, finishedAt: new Date() }), io);
      return EXIT_OK;
    }
    if (!opts.autoApprove) {
      // with --format json, stdout carries only the result document: the plan to review goes to the terminal on stderr
      const review = PLAN_FORMATS.text(plan, { color: useColor(io) });
      if (opts.format === "json") io.stderr(review);
      else io.stdout(review);
      const answer = await opts.confirm?.ask(`Apply these ${plan.changes.length} changes to ${serviceName(plan.base_url, opts.profile?.name)}? Only 'yes' is accepted: `);
      if ((answer ?? "").trim() !== "yes") {
        io.stderr("Apply cancelled; nothing was changed.\n");
        return EXIT_ERROR;
      }
      if (!lock.stillHeld()) {
        throw new UserError(`the lock ${shown(lock.file, cwd)} was taken over while waiting for the answer; nothing was changed — run again`);
      }
    }
    // the applied plan is kept, like a saved one: the journal refers to it and a resume needs it
    const stamp = plan.created_at.replace(/[:.]/g, "-");
    const dir = join(cwd, RUNS_DIR, `${stamp}-${process.pid}`);
    await mkdir(dir, { recursive: true });
    const planFile = join(dir, "plan.json");
    // written once and handed over as it is: the plan was made here, not read from a file someone could edit
    const signed = await writePlanFile(planFile, plan);
    const loaded: LoadedPlan = { plan: signed, digest: signed.digest, file: planFile };
    const journalFile = opts.journal ? resolve(cwd, opts.journal) : `${planFile}.journal.jsonl`;
    if (!opts.quiet) io.stderr(`plan saved to ${shown(planFile, cwd)}; journal ${shown(journalFile, cwd)}\n`);
    return applyLoaded(loaded, journalFile, runOpts, cwd, io, lock);
  });
}

async function withLock(
  opts: ApplyCommandOptions,
  cwd: string,
  applying: string,
  io: CommandIO,
  body: (lock: HeldLock) => Promise<number>,
): Promise<number> {
  const file = resolve(cwd, opts.lockFile ?? DEFAULT_LOCK_FILE);
  const lock = await acquireWaiting(file, { applying, timeoutMs: opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS }, opts, io);
  try {
    // the heartbeat tells a run on another host that this one still lives (on this host the pid says so)
    lock.startHeartbeat(opts.tuning?.heartbeatMs);
    if (lock.tookOver) io.stderr(`flowrules: ${describeTakeOver(shown(file, cwd), lock.tookOver)}\n`);
    return await body(lock);
  } finally {
    lock.release();
  }
}

/**
 * The lock, waiting up to --lock-wait while a live apply holds it (looking again every couple of seconds); the
 * holder is named once, when the wait begins. Past the wait, the refusal says how long it waited.
 */
async function acquireWaiting(file: string, lockOpts: LockOptions, opts: ApplyCommandOptions, io: CommandIO): Promise<HeldLock> {
  const waitMs = opts.lockWaitMs ?? 0;
  const until = Date.now() + waitMs;
  const wait = opts.lockWaitText ?? `${Math.round(waitMs / 1000)}s`;
  let waiting = false;
  for (;;) {
    try {
      return acquireLock(file, lockOpts);
    } catch (err) {
      if (!(err instanceof LockHeldError) || waitMs <= 0) throw err;
      const left = until - Date.now();
      if (left <= 0) throw new UserError(`${err.holder}; waited ${wait} for it to finish (--lock-wait), nothing was changed`);
      if (!waiting && !opts.quiet) io.stderr(`flowrules: ${err.holder}; waiting up to ${wait} for it to finish\n`);
      waiting = true;
      await new Promise((r) => setTimeout(r, Math.min(left, opts.tuning?.lockPollMs ?? 2000)));
    }
  }
}

/** What a run of an applied plan came to, for callers that apply plans in turn (`watch`). */
export interface AppliedResult {
  outcomes: ChangeOutcome[];
  /** changes of rules in audit, never sent */
  audit: number;
}

type RunOptions = ApplyCommandOptions & {
  batchSize: number;
  startedAt: Date;
  deadline?: number;
  limiter: RequestLimiter;
  onResult?: (r: AppliedResult) => void;
};

/**
 * Applies a plan made in this process as `apply --auto-approve` does, under a lock the caller holds: written to
 * `<dir>/plan.json` (the journal beside it refers to it, a resume needs it), checked like a saved plan, then executed.
 * `watch` applies each cycle's plan through it: no second copy of applying.
 */
export async function applyPlanInDir(
  plan: Plan,
  dir: string,
  opts: ApplyCommandOptions & { limiter: RequestLimiter; onResult?: (r: AppliedResult) => void },
  io: CommandIO,
  lock: HeldLock,
): Promise<number> {
  const { writePlanFile } = await import("../plan/write.js");
  await mkdir(dir, { recursive: true });
  const planFile = join(dir, "plan.json");
  await writePlanFile(planFile, plan);
  return resumePlanFile(planFile, opts, io, lock);
}

/** Applies (or resumes, from its journal) a plan file under a lock the caller holds, as `apply plan.json` does. */
export async function resumePlanFile(
  planFile: string,
  opts: ApplyCommandOptions & { limiter: RequestLimiter; onResult?: (r: AppliedResult) => void },
  io: CommandIO,
  lock: HeldLock,
): Promise<number> {
  const cwd = opts.cwd ?? process.cwd();
  const loaded = await loadPlanForApply(planFile, opts.connection.baseUrl, { compact: true });
  const runOpts: RunOptions = { ...opts, batchSize: opts.batchSize ?? DEFAULT_BATCH_SIZE, startedAt: new Date() };
  return applyLoaded(loaded, `${planFile}.journal.jsonl`, runOpts, cwd, io, lock);
}

/**
 * The journal is the plan's memory of what was sent, so one run at a time may use it, whatever its working directory
 * or --lock-file (issue 28: two applies of one plan from two directories sent changes twice). Its own lock beside
 * it, taken after the run's lock (always in this order, so two runs never wait on each other), works like that one:
 * a live holder is refused (or waited for, --lock-wait), a dead one's lock is taken over.
 */
export function journalLockFile(journalFile: string): string {
  return `${journalFile}.lock`;
}

async function applyLoaded(
  loaded: LoadedPlan,
  journalFile: string,
  opts: RunOptions,
  cwd: string,
  io: CommandIO,
  lock: HeldLock,
): Promise<number> {
  const lockOpts = { applying: lock.owner.applying, timeoutMs: opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS };
  const journalLock = await acquireWaiting(journalLockFile(journalFile), lockOpts, opts, io);
  try {
    journalLock.startHeartbeat(opts.tuning?.heartbeatMs);
    if (journalLock.tookOver) io.stderr(`flowrules: ${describeTakeOver(shown(journalLock.file, cwd), journalLock.tookOver)}\n`);
    return await applyJournalled(loaded, journalFile, opts, cwd, io, lock);
  } finally {
    journalLock.release();
  }
}

async function applyJournalled(
  loaded: LoadedPlan,
  journalFile: string,
  opts: RunOptions,
  cwd: string,
  io: CommandIO,
  lock: HeldLock,
): Promise<number> {
  // changes of rules in audit are shown in plans and never sent: they leave here, counted apart
  const audit = loaded.plan.changes.filter((c) => c.audit === true).length;
  const plan = audit > 0 ? { ...loaded.plan, changes: loaded.plan.changes.filter((c) => c.audit !== true) } : loaded.plan;
  const instanceOf = new Map(plan.changes.map((c) => [c.id, c.instance_id]));
  const journal = Journal.open(journalFile, loaded.digest, (id) => instanceOf.get(id));
  instanceOf.clear(); // replayed: the journal needs it no more (one entry per change at 100,000 changes)
  const view = progressView(io, { quiet: opts.quiet, ratePerMin: sendRatePerMin(opts.connection.rateLimitPerMin) });
  const say = (line: string): void => {
    if (opts.quiet) return;
    view.clear();
    io.stderr(`${line}\n`);
  };
  if (journal.skippedLines > 0) io.stderr(`flowrules: ignored ${journal.skippedLines} unreadable line(s) of the journal ${shown(journalFile, cwd)} (torn by a crash?)\n`);
  if (journal.earlierRuns > 0) say(`resuming: the journal records ${journal.earlierRuns} earlier run(s) of this plan`);
  // a journal of another plan is no memory of this one: said, since a wrong --journal may hide a half-applied plan
  if (journal.earlierRuns === 0 && journal.otherPlanRuns > 0) {
    io.stderr(`flowrules: warning: the journal ${shown(journalFile, cwd)} records ${journal.otherPlanRuns} run(s) of other plans and none of this one; they are not taken into account\n`);
  }

  const c = opts.connection;
  const logClientEvent = clientEventLogger(io.log ?? nullLogger);
  const client = clientFrom(c, {
    onEvent: (e) => {
      logClientEvent(e);
      view.clientEvent(e);
    },
    // no change waits for the rate window past --max-duration (issue 28)
    ...(opts.deadline !== undefined ? { notAfter: opts.deadline } : {}),
    ...opts.tuning?.client,
    limiter: opts.limiter,
  });
  try {
    journal.start({ flowrules_version: VERSION, plan_file: loaded.file });
    say(`applying ${plan.changes.length} change${plan.changes.length === 1 ? "" : "s"} of ${shown(loaded.file, cwd)} to ${serviceName(client.baseUrl, opts.profile?.name)}${audit > 0 ? ` (${audit} in audit, not sent)` : ""}`);
    const log = io.log ?? nullLogger;
    // change events stream as outcomes are known; the ones never attempted are logged at the end
    const logged = new Set<string>();
    let latest: ApplyProgress | undefined;
    lock.setProgress(() => (latest ? `${latest.settled.toLocaleString("en-US")} of ${latest.total.toLocaleString("en-US")} changes settled` : "starting"));
    const result = await executePlan(client, plan, journal, {
      onOutcome: (o) => {
        logged.add(o.change.id);
        logOutcomes(log, [o]);
      },
      batchSize: opts.batchSize,
      clockSkewMs: opts.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
      maxSendAttempts: opts.tuning?.maxSendAttempts ?? 3,
      verifyDelayMs: opts.tuning?.verifyDelayMs ?? 1000,
      concurrency: c.concurrency,
      ...(opts.signal ? { signal: opts.signal } : {}),
      progress: say,
      recheckEveryMs: opts.recheckEveryMs ?? DEFAULT_RECHECK_EVERY_MS,
      ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
      onProgress: (p) => {
        view.apply(p);
        latest = p;
      },
      onCheck: (check) => log.event("apply.checked", { ...check }, "debug"),
    });
    view.finish();
    const counts = countOutcomes(result.outcomes);
    logOutcomes(log, result.outcomes.filter((o) => !logged.has(o.change.id)));
    log.event("apply.finished", { plan_file: shown(loaded.file, cwd), journal: shown(journalFile, cwd), changes: result.outcomes.length, ...counts, not_aborted: counts.not_acted, audit, requests: client.stats().total });
    journal.append({
      event: "finish",
      applied: counts.applied,
      stale: counts.stale,
      failed: counts.failed,
      not_acted: counts.not_acted,
      deferred: counts.deferred,
    });
    const summary = APPLY_FORMATS[opts.format ?? "text"]({
      kind: "applied",
      baseUrl: client.baseUrl,
      audit: loaded.plan.changes.filter((ch) => ch.audit === true),
      outcomes: result.outcomes,
      stats: client.stats(),
      journalFile: shown(journalFile, cwd),
      planFile: shown(loaded.file, cwd),
      listedAsChanged: result.listedAsChanged,
      readToCheck: result.readToCheck,
      checks: result.checks,
      ...(opts.maxDurationText ? { maxDuration: opts.maxDurationText } : {}),
    });
    opts.onResult?.({ outcomes: result.outcomes, audit });
    io.stdout(summary);
    const files = { planFile: shown(loaded.file, cwd), journalFile: shown(journalFile, cwd) };
    await sendNotification(opts.notify, applyPayload({ plan: opts.profile ? { ...loaded.plan, profile: opts.profile.name } : loaded.plan, outcomes: result.outcomes, audit, ...files }, { startedAt: opts.startedAt, finishedAt: new Date() }), io);
    return applyExitCode(result.outcomes, opts.detailedExitcode);
  } finally {
    view.finish();
    journal.close();
    await client.close();
  }
}
