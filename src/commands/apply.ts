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
import { defined } from "../model/defined.js";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { clientFrom, sharedLimiter } from "../api/index.js";
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_LOCK_FILE,
  DEFAULT_LOCK_TIMEOUT_MS,
  serviceName,
  type ConnectionSettings,
} from "../model/settings.js";
import type { LoadedRules } from "./planning.js";
import { EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { describeTakeOver, type HeldLock } from "../fs/lock.js";
import { acquireWaiting } from "../apply/run.js";
import { looksLikePlanFile, type LoadedPlan } from "../plan/read.js";
import { loadPlanForApply } from "../apply/load.js";
import { journalPathProblem } from "../apply/journal.js";
import { APPLY_FORMATS } from "../render/apply/index.js";
import { shardOfPlan } from "../plan/shard.js";
import { streamToStdout, useColor, type CommandIO } from "../log/command-io.js";
import { sendNotification } from "./notify.js";
import { applyPayload } from "../render/notify/payload.js";
import { textSafe } from "../render/escape.js";
import { redactor } from "../log/redact.js";
import { errorMessage } from "../model/guards.js";
import { openStateForApply, stateSettingsOf, type HeldState } from "./state.js";
import { plural } from "../text/plural.js";
import { applyLoaded, lockWait, shown } from "./apply-loaded.js";
import type { ApplyCommandOptions } from "./apply-options.js";
import { changeCounts } from "../plan/change-counts.js";

export type { ApplyCommandOptions, Confirm } from "./apply-options.js";

export const RUNS_DIR = ".flowrules/runs";

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

/**
 * With --format json a pipeline always gets one document on stdout: a run that stops before any change is settled
 * (a refused plan file, rules that do not load, the lock held, a cancelled confirmation) says so in it as
 * `not_applied`, with the reason, besides the usual line on stderr.
 */
export async function applyCommand(opts: ApplyCommandOptions, io: CommandIO): Promise<number> {
  if (opts.format !== "json") return applyRun(opts, io);
  let wrote = false;
  const watched: CommandIO = {
    ...io,
    stdout: (s) => ((wrote = true), io.stdout(s)),
    stdoutPieces: (pieces) => ((wrote = true), streamToStdout(io, pieces)),
  };
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
          { ...runOpts, ...defined({ writeThrough: held }) },
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
    const audit = changeCounts(plan.changes).audit;
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
    return applyLoaded(loaded, journalFile, { ...runOpts, ...defined({ writeThrough: held }) }, cwd, io, lock);
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
