/**
 * `flowrules apply`: executes a saved plan exactly once, or plans rules and applies them in one go.
 *
 *   apply plan.json                      every check before any request, then lock → journal → execute → summary
 *   apply [paths...] --auto-approve      lock → plan → save plan under .flowrules/runs/ → the same as above
 *   apply [paths...]   (on a terminal)   shows the plan and applies only after "yes"
 *
 * A plan file is told from rule paths by content (a JSON object with `format_version`), or by a .json name.
 */
import { deferredWords } from "../render/plan/summary.js";
import { mkdir } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import { clientFrom, sharedLimiter, type ApiClient, type ClientOptions, type RequestLimiter } from "../api/index.js";
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_LOCK_FILE,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_RECHECK_EVERY_MS,
  sendRatePerMin,
  serviceName,
  type ApplyingSettings,
  type ConnectionSettings,
} from "../model/settings.js";
import { durationText } from "../text/duration.js";
import type { LoadedRules, PlanRunOptions } from "./planning.js";
import { EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { describeTakeOver, type HeldLock } from "../fs/lock.js";
import { acquireWaiting, applyLoadedPlan, type LockWait } from "../apply/run.js";
import { looksLikePlanFile, type LoadedPlan } from "../plan/read.js";
import { loadPlanForApply } from "../apply/load.js";
import { journalPathProblem } from "../apply/journal.js";
import { applyExitCode, countOutcomes } from "../apply/outcome.js";
import { APPLY_FORMATS, type ApplyFormat } from "../render/apply/index.js";
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
import { openStateForApply, stateSettingsOf, type HeldState } from "./state.js";
import { plural } from "../text/plural.js";

export const RUNS_DIR = ".flowrules/runs";

/** Asks the person at the terminal (stdin). */
export interface Confirm {
  /** stdin is a terminal */
  isTTY: boolean;
  ask(question: string): Promise<string>;
}

/**
 * `apply`'s options. With rule paths it plans with the same PlanRunOptions as `plan` (built from the same resolved
 * settings in src/cli), handed over whole, so every planning flag works alike on both verbs. How it applies is the
 * applying settings (src/model/settings.ts, documented there), each optional here: the library's callers get the
 * defaults.
 */
export interface ApplyCommandOptions
  extends PlanRunOptions, Partial<Omit<ApplyingSettings, "autoApprove">>, Pick<ApplyingSettings, "autoApprove"> {
  paths: string[];
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
  /** webhooks told at the end (--notify, its variable or the profile) */
  notify?: NotifySettings;
  /** with --state: the state the changes are sent through, written through (src/commands/state.ts) */
  writeThrough?: HeldState;
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
  if (paths.length > 1)
    throw new UserError(
      "a saved plan is applied on its own: flowrules apply plan.json (rule paths go without a plan file)",
    );
  return { kind: "plan", file: plans[0] ?? "" };
}

/** The base URL as the client writes it (normalised): what a state dir was made for. */
async function baseUrlOf(connection: ConnectionSettings): Promise<string> {
  const client = clientFrom(connection);
  const { baseUrl } = client;
  await client.close();
  return baseUrl;
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
  const limiter =
    opts.tuning?.client?.limiter ?? sharedLimiter(opts.connection, opts.tuning?.client?.rateLimitWindowMs);
  const runOpts = { ...opts, batchSize, startedAt, limiter, ...(deadline !== undefined ? { deadline } : {}) };
  // a FIFO or a device named as the journal would block the process at its first read: refused before anything
  const journalProblem = opts.journal ? journalPathProblem(resolve(cwd, opts.journal)) : undefined;
  if (journalProblem !== undefined) throw new UserError(journalProblem);
  const mode = await detectMode(opts.paths, cwd);
  if (mode.kind === "plan") {
    if (opts.rules.length > 0) throw new UserError("--rule selects rules to plan; a saved plan is applied as a whole");
    if (opts.changedSince !== undefined)
      throw new UserError("--changed-since selects rules to plan; a saved plan is applied as a whole");
    // every refusal (format, shape, digest, errors, base URL) happens here, before the lock and any request
    const checked = await loadPlanForApply(mode.file, opts.connection.baseUrl, { compact: true });
    const loaded = { ...checked, plan: shardOfPlan(checked.plan, opts.shard) };
    const journalFile = opts.journal ? resolve(cwd, opts.journal) : `${mode.file}.journal.jsonl`;
    const stateSettings = stateSettingsOf(opts);
    return withLock(opts, cwd, `${shown(mode.file, cwd)} (${loaded.digest.slice(0, 19)}…)`, io, async (lock) => {
      // with --state: the changes' answers are written through, so the next run with the state reads none of them
      const held = stateSettings
        ? await openStateForApply(stateSettings, await baseUrlOf(opts.connection), opts.connection.apiKey, io)
        : undefined;
      try {
        const code = await applyLoaded(
          loaded,
          journalFile,
          { ...runOpts, ...(held ? { writeThrough: held } : {}) },
          cwd,
          io,
          lock,
        );
        await held?.finish();
        return code;
      } finally {
        await held?.release();
      }
    });
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
    // with --state, the state stays open after planning: the apply sends through it and it is written after
    let held: HeldState | undefined;
    try {
      const code = await planAndApply(rules, lock, (h) => (held = h));
      await held?.finish();
      return code;
    } finally {
      await held?.release();
    }
  });

  async function planAndApply(
    loadedRules: LoadedRules,
    lock: HeldLock,
    keepState: (h: HeldState) => void,
  ): Promise<number> {
    // the same planning as `plan`: the run's planning settings, whole; one rate budget with the apply that follows
    let held: HeldState | undefined;
    const plan = await planLoaded(loadedRules, opts.connection, io, {
      ...opts,
      limiter,
      recordSeen: true,
      keepState: (h) => keepState((held = h)),
    });
    if (plan.errors.length > 0) {
      for (const e of plan.errors) io.stderr(`plan error: ${textSafe(e.message)}\n`);
      io.stderr(`not applying: the plan failed (${plural(plan.errors.length, "error")}); nothing was changed\n`);
      return EXIT_ERROR;
    }
    const audit = plan.changes.filter((c) => c.audit === true).length;
    if (plan.changes.length === audit) {
      io.stdout(
        APPLY_FORMATS[opts.format ?? "text"]({
          kind: "nothing",
          baseUrl: plan.base_url,
          audit: plan.changes.filter((c) => c.audit === true),
        }),
      );
      await sendNotification(
        opts.notify,
        applyPayload(
          { plan, outcomes: [], audit, planFile: "", journalFile: "" },
          { startedAt, finishedAt: new Date() },
        ),
        io,
      );
      return EXIT_OK;
    }
    if (!opts.autoApprove) {
      // with --format json, stdout carries only the result document: the plan to review goes to the terminal on stderr
      const review = PLAN_FORMATS.text(plan, { color: useColor(io) });
      if (opts.format === "json") io.stderr(review);
      else io.stdout(review);
      const answer = await opts.confirm?.ask(
        `Apply ${plan.changes.length === 1 ? "this change" : `these ${plan.changes.length} changes`} to ${serviceName(plan.base_url, opts.profile?.name)}? Only 'yes' is accepted: `,
      );
      if ((answer ?? "").trim() !== "yes") {
        io.stderr("Apply cancelled; nothing was changed.\n");
        return EXIT_ERROR;
      }
      if (!lock.stillHeld()) {
        throw new UserError(
          `the lock ${shown(lock.file, cwd)} was taken over while waiting for the answer; nothing was changed — run again`,
        );
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
    if (!opts.quiet) {
      for (const r of plan.rules) {
        const words = deferredWords(r);
        if (words) io.stderr(`rule "${r.name}": ${words}\n`);
      }
    }
    return applyLoaded(loaded, journalFile, { ...runOpts, ...(held ? { writeThrough: held } : {}) }, cwd, io, lock);
  }
}

async function withLock(
  opts: ApplyCommandOptions,
  cwd: string,
  applying: string,
  io: CommandIO,
  body: (lock: HeldLock) => Promise<number>,
): Promise<number> {
  const file = resolve(cwd, opts.lockFile ?? DEFAULT_LOCK_FILE);
  const lock = await acquireWaiting(
    file,
    { applying, timeoutMs: opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS },
    lockWait(opts, io),
  );
  try {
    // the heartbeat tells a run on another host that this one still lives (on this host the pid says so)
    lock.startHeartbeat(opts.tuning?.heartbeatMs);
    if (lock.tookOver) io.stderr(`flowrules: ${describeTakeOver(shown(file, cwd), lock.tookOver)}\n`);
    return await body(lock);
  } finally {
    lock.release();
  }
}

/** --lock-wait: while a live apply holds the lock, wait for it (named once, when the wait begins). */
function lockWait(opts: ApplyCommandOptions, io: CommandIO): LockWait {
  return {
    waitMs: opts.lockWaitMs ?? 0,
    waitText: durationText(opts.lockWaitMs ?? 0),
    how: "--lock-wait",
    ...(opts.tuning?.lockPollMs !== undefined ? { pollMs: opts.tuning.lockPollMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    onWaiting: (holder, wait) => {
      if (!opts.quiet) io.stderr(`flowrules: ${holder}; waiting up to ${wait} for it to finish\n`);
    },
  };
}

type RunOptions = ApplyCommandOptions & {
  batchSize: number;
  startedAt: Date;
  deadline?: number;
  limiter: RequestLimiter;
};

/**
 * Applies a loaded plan under the run's lock (src/apply/run.ts: journal lock, journal, execution) and shows what
 * happened: progress on stderr, change events, the summary on stdout, the notification, the exit code.
 */
async function applyLoaded(
  loaded: LoadedPlan,
  journalFile: string,
  opts: RunOptions,
  cwd: string,
  io: CommandIO,
  lock: HeldLock,
): Promise<number> {
  const c = opts.connection;
  const view = progressView(io, { quiet: opts.quiet, ratePerMin: sendRatePerMin(c.rateLimitPerMin) });
  const say = (line: string): void => {
    if (opts.quiet) return;
    view.clear();
    io.stderr(`${line}\n`);
  };
  const log = io.log ?? nullLogger;
  const logClientEvent = clientEventLogger(log);
  // change events stream as outcomes are known; the ones never attempted are logged at the end
  const logged = new Set<string>();
  try {
    const through = opts.writeThrough;
    const run = await applyLoadedPlan(loaded, {
      journalFile,
      lock,
      // with --state, through the state: our writes' answers are written through (reads still reach the service)
      ...(through ? { sendThrough: (client: ApiClient) => through.applying(client) } : {}),
      connection: { ...c, ...(opts.signal ? { stop: opts.signal } : {}) },
      limiter: opts.limiter,
      ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
      batchSize: opts.batchSize,
      clockSkewMs: opts.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
      recheckEveryMs: opts.recheckEveryMs ?? DEFAULT_RECHECK_EVERY_MS,
      lockTimeoutMs: opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
      lockWait: lockWait(opts, io),
      ...(opts.profile ? { profileName: opts.profile.name } : {}),
      ...(opts.tuning ? { tuning: opts.tuning } : {}),
      shown: (f) => shown(f, cwd),
      say,
      warn: (line) => io.stderr(`${line}\n`),
      onClientEvent: (e) => {
        logClientEvent(e);
        view.clientEvent(e);
      },
      onOutcome: (o) => {
        logged.add(o.change.id);
        logOutcomes(log, [o]);
      },
      onProgress: (p) => view.apply(p),
      onCheck: (check) => log.event("apply.checked", { ...check }, "debug"),
    });
    view.finish();
    const counts = countOutcomes(run.outcomes);
    logOutcomes(
      log,
      run.outcomes.filter((o) => !logged.has(o.change.id)),
    );
    log.event("apply.finished", {
      plan_file: shown(loaded.file, cwd),
      journal: shown(journalFile, cwd),
      changes: run.outcomes.length,
      ...counts,
      not_aborted: counts.not_acted,
      audit: run.audit.length,
      requests: run.stats.total,
    });
    const summary = APPLY_FORMATS[opts.format ?? "text"]({
      kind: "applied",
      baseUrl: run.baseUrl,
      audit: run.audit,
      outcomes: run.outcomes,
      stats: run.stats,
      journalFile: shown(journalFile, cwd),
      planFile: shown(loaded.file, cwd),
      listedAsChanged: run.listedAsChanged,
      readToCheck: run.readToCheck,
      checks: run.checks,
      ...(opts.maxDurationMs !== undefined ? { maxDuration: durationText(opts.maxDurationMs) } : {}),
      plan: loaded.plan,
      ...(opts.signal?.aborted ? { stopped: true } : {}),
    });
    io.stdout(summary);
    const files = { planFile: shown(loaded.file, cwd), journalFile: shown(journalFile, cwd) };
    await sendNotification(
      opts.notify,
      applyPayload(
        {
          plan: opts.profile ? { ...loaded.plan, profile: opts.profile.name } : loaded.plan,
          outcomes: run.outcomes,
          audit: run.audit.length,
          ...files,
        },
        { startedAt: opts.startedAt, finishedAt: new Date() },
      ),
      io,
    );
    return applyExitCode(run.outcomes, opts.detailedExitcode);
  } finally {
    view.finish();
  }
}
