/**
 * One cycle of a watcher (docs/watch.md, "What a watcher does"): a plan with the state room, as `plan` makes it;
 * with --apply its enforce changes applied exactly once under the watcher's lock, through the same code as
 * `apply --auto-approve` (src/apply/run.ts; plan and journal in a cycle folder); then the bookmarks, and what it did
 * — one line for the cycle and one per change on stderr, or events — and the notification.
 */
import type { ApiClient, ClientSettings, RequestLimiter } from "../api/index.js";
import type { HeldLock } from "../fs/lock.js";
import { countOutcomes, type ChangeOutcome } from "../apply/outcome.js";
import { accessSync, constants, existsSync } from "node:fs";
import { loadPlanForApply } from "../apply/load.js";
import { journalPathProblem } from "../apply/journal.js";
import { applyLoadedPlan, applyPlanInDir } from "../apply/run.js";
import type { CommandIO } from "../log/command-io.js";
import { nullLogger } from "../log/index.js";
import { UserError } from "../model/errors.js";
import type { LoadedPlan } from "../plan/read.js";
import type { Plan } from "../plan/types.js";
import { logCycle, logCycleChanges } from "../render/events/watch.js";
import { applyPayload, planPayload } from "../render/notify/payload.js";
import {
  changeLines,
  cycleLine,
  errorLines,
  resumingLine,
  setAsideLine,
  stoppedCycleLine,
  type CycleReport,
} from "../render/watch/text.js";
import { basename, dirname } from "node:path";
import { writeBookmarks, type Bookmarks } from "./bookmarks.js";
import { appendCycleLog } from "./cycle-log.js";
import { cycleDir, planProblem, pruneCycles, setAside, type WatchPaths } from "./cycles.js";
import type { WatchMetrics } from "./metrics.js";
import { CHANGE_LINES_PER_CYCLE, ERROR_LINES_PER_CYCLE } from "./settings.js";
import type { HeldCycleState, Loaded, WatcherSettings } from "./types.js";
import type { ListedChanges } from "../state/index.js";
import { changeCounts, sentChanges } from "../plan/change-counts.js";

/** Thrown when a cycle ends because the watcher is stopping: not a failure. */
export class StoppingError extends Error {
  constructor() {
    super("stopping");
  }
}

/** What a cycle needs of its watcher. */
export interface CycleContext {
  settings: WatcherSettings;
  io: CommandIO;
  stop: AbortSignal;
  loaded: Loaded;
  /** the watcher's connection: its metrics' sink and its stop */
  connection: ClientSettings;
  limiter: RequestLimiter;
  lock: HeldLock;
  metrics: WatchMetrics;
  paths: WatchPaths;
  baseUrl: string;
  /** rule name → its workflow's id, for the rules that resolved */
  workflowOf: ReadonlyMap<string, number>;
  bookmarks: Bookmarks | undefined;
  /** state-cache: the watcher's own writes since its bookmarks, per workflow (./poll.ts): a cycle adds its own */
  own: Map<number, Map<number, string | null>>;
}

/** What a cycle ended with, for the loop: the bookmarks, its result, the rules it held, the workflows left behind. */
export interface CycleOutcome {
  bookmarks: Bookmarks | undefined;
  result: "ok" | "partial" | "failed";
  /** rules held back by their own data, with the first error of each */
  held: ReadonlyMap<string, string>;
  /** workflows whose bookmarks did not move on (a failure): their polls' finds wait for the retry */
  behind: ReadonlySet<number>;
  /** state-cache: per workflow, from when the next cycle's state lists changes (empty: the state was not written) */
  changesFrom?: ReadonlyMap<number, string>;
}

/**
 * Errors that hold back only their own rule, for a person to look at: its data or its definition (over
 * max_instances, an expression that fails, two rules that clash, a step or a workflow it names that is not there).
 * The rest (the service's answers, errors outside any rule) fail the cycle and are retried with back-off.
 */
const HELD_CODES: ReadonlySet<string> = new Set(["limit", "evaluation", "conflict", "structure", "resolve"]);

export function heldRules(errors: Plan["errors"]): Map<string, string> {
  const held = new Map<string, string>();
  for (const e of errors)
    if (e.rule !== undefined && HELD_CODES.has(e.code) && !held.has(e.rule)) held.set(e.rule, e.message);
  return held;
}

export interface CycleRequest {
  n: number;
  kind: CycleReport["kind"];
  /** per workflow, the newest update the poll before it found */
  polled: ReadonlyMap<number, string>;
  now: Date;
  /** state-cache: the changes listings that poll asked (./poll.ts), for the cycle's state to take as its own */
  listed?: ListedChanges;
}

/** The cycle's io: events, but no line of the plan or the apply (the cycle says what it did in its own lines). */
function quiet(io: CommandIO): CommandIO {
  return { ...io, stdout: () => undefined, stdoutPieces: async () => undefined, stderr: () => undefined };
}

function text(io: CommandIO, lines: string[]): void {
  if (!(io.log ?? nullLogger).structured && lines.length > 0) io.stderr(`${lines.join("\n")}\n`);
}

function applyOptions(ctx: CycleContext) {
  return {
    lock: ctx.lock,
    connection: ctx.connection,
    limiter: ctx.limiter,
    ...(ctx.loaded.profileName ? { profileName: ctx.loaded.profileName } : {}),
    ...(ctx.settings.tuning ? { tuning: ctx.settings.tuning } : {}),
  };
}

/** Counts a run's outcomes into the metrics. */
function count(metrics: WatchMetrics, outcomes: readonly ChangeOutcome[]): void {
  for (const o of outcomes) {
    if (o.status === "applied") metrics.changeApplied(o.change.rule, o.change.kind);
    else if (o.status === "stale") metrics.changeStale();
    else if (o.status === "failed" || o.status === "not_acted") metrics.changeFailed();
  }
}

/**
 * A cycle of a watcher killed while applying, resumed from its journal: nothing is sent twice. A plan that cannot be
 * read (a crash truncated it) or no longer applies (edited, another service) is set aside in one warning line and
 * not tried again: the next cycle plans afresh from what the service says now, and every change it plans is checked
 * against the instance before it is sent, so nothing the lost plan sent is sent twice.
 */
export async function resumeCycle(ctx: CycleContext, planFile: string): Promise<void> {
  const log = ctx.io.log ?? nullLogger;
  let loaded: LoadedPlan;
  const journalFile = `${planFile}.journal.jsonl`;
  try {
    // a journal that cannot be read (a folder at its path, no permission) is no memory of the cycle: resuming it would
    // fail the same way every time, so the folder is set aside as for a plan that cannot be read
    const journalProblem = cycleJournalProblem(journalFile);
    if (journalProblem !== undefined) throw new UserError(journalProblem);
    loaded = await loadPlanForApply(planFile, ctx.connection.baseUrl, { compact: true });
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    const movedTo = await setAside(planFile);
    const problem = planProblem(err.message);
    log.event("watch.cycle_set_aside", { plan_file: planFile, moved_to: movedTo, error: problem }, "warn");
    text(ctx.io, [setAsideLine(problem, movedTo)]);
    return;
  }
  text(ctx.io, [resumingLine(planFile)]);
  const run = await applyLoadedPlan(loaded, { ...applyOptions(ctx), journalFile });
  count(ctx.metrics, run.outcomes);
  logCycleChanges(log, { plan_file: planFile }, run.outcomes, []);
  log.event("watch.resumed", { plan_file: planFile, ...countOutcomes(run.outcomes) });
  text(
    ctx.io,
    changeLines(
      run.outcomes.filter((o) => o.status !== "already_done" && o.status !== "deferred"),
      CHANGE_LINES_PER_CYCLE,
      "flowrules history --state DIR",
    ),
  );
}

/** Why a cycle's journal cannot be read and appended to, or undefined (missing is fine: nothing was sent). */
function cycleJournalProblem(file: string): string | undefined {
  const problem = journalPathProblem(file);
  if (problem !== undefined || !existsSync(file)) return problem;
  try {
    accessSync(file, constants.R_OK | constants.W_OK);
    return undefined;
  } catch (err) {
    return `cannot read the journal ${file}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`;
  }
}

/** Runs one cycle; returns the bookmarks after it (moved on when everything planned was settled) and its result. */
export async function runCycle(ctx: CycleContext, req: CycleRequest): Promise<CycleOutcome> {
  const started = Date.now();
  const startedAt = new Date();
  const requestsBefore = ctx.metrics.requestCount();
  // state-cache: the plan's state stays open through the apply (write-through), then it is written
  let held: HeldCycleState | undefined;
  try {
    const outcome = await planAndApply(ctx, req, started, startedAt, requestsBefore, (h) => (held = h));
    await held?.finish();
    return { ...outcome, changesFrom: held?.changesFrom() ?? new Map() };
  } finally {
    await held?.release();
  }
}

async function planAndApply(
  ctx: CycleContext,
  req: CycleRequest,
  started: number,
  startedAt: Date,
  requestsBefore: number,
  keep: (h: HeldCycleState) => void,
): Promise<CycleOutcome> {
  const { settings, io, metrics, loaded } = ctx;
  const log = io.log ?? nullLogger;
  let held: HeldCycleState | undefined;
  const plan: Plan | undefined = await loaded
    .plan({
      connection: ctx.connection,
      io: quiet(io),
      limiter: ctx.limiter,
      first: req.n === 1,
      recordSeen: settings.apply,
      keep: (h) => keep((held = h)),
      onSync: (p) => metrics.syncProgress(p),
      ...(req.listed && req.listed.size > 0 ? { listed: req.listed } : {}),
    })
    .catch((err: unknown) => {
      if (ctx.stop.aborted) return undefined;
      throw err;
    });
  if (plan === undefined) {
    // cut short while planning: nothing was applied, the next watcher plans afresh from the same bookmarks
    log.event("watch.cycle_stopped", {
      cycle: req.n,
      kind: req.kind,
      requests: metrics.requestCount() - requestsBefore,
    });
    text(io, [stoppedCycleLine(req.n, req.kind, loaded.ruleSet.rules.length, metrics.requestCount() - requestsBefore)]);
    throw new StoppingError();
  }
  const errors = plan.errors.map((e) => e.message);
  const heldBack = heldRules(plan.errors);
  const otherErrors = plan.errors.filter((e) => e.rule === undefined || !HELD_CODES.has(e.code));
  // counted, not kept (src/plan/change-counts.ts)
  const planned = changeCounts(plan.changes);
  const enforced = planned.total - planned.audit;
  let outcomes: ChangeOutcome[] | undefined;
  let planFile = "";
  if (settings.apply && enforced > 0) {
    // a rule that failed this cycle (over its limit, an API error) has no change in the plan; the others go on
    const through = held;
    const run = await applyPlanInDir({ ...plan, errors: [] }, cycleDir(ctx.paths.cycles, plan.created_at, req.n), {
      ...applyOptions(ctx),
      ...(through ? { sendThrough: (c: ApiClient) => through.applying(c) } : {}),
    });
    outcomes = run.outcomes;
    planFile = run.planFile;
    count(metrics, outcomes);
    await pruneCycles(ctx.paths.cycles);
  }
  const counts = countOutcomes(outcomes ?? []);
  const failed = counts.failed + counts.not_acted;
  // changes left unsent (stopped, deferred) are planned again: the bookmarks stay where they were
  const unsent = counts.not_started + counts.deferred;
  const moved = failed === 0 && unsent === 0 && !ctx.stop.aborted ? await movedOn(ctx, plan, req) : undefined;
  const bookmarks = moved?.bookmarks ?? ctx.bookmarks;
  const behind: ReadonlySet<number> = moved?.behind ?? new Set(req.polled.keys());
  // state-cache: the bookmarks moved on: only this cycle's writes are newer; an abort's answer names no workflow
  if (bookmarks !== ctx.bookmarks) ctx.own.clear();
  // made only when a write does not name its workflow
  let pidOf: Map<number, number> | undefined;
  for (const w of held?.written() ?? []) {
    if (w.process_id === undefined && !pidOf) {
      pidOf = new Map();
      for (const c of plan.changes) pidOf.set(c.instance_id, c.process_id);
    }
    const pid = w.process_id ?? pidOf?.get(w.id);
    if (pid === undefined) continue;
    if (!ctx.own.has(pid)) ctx.own.set(pid, new Map());
    ctx.own.get(pid)?.set(w.id, w.last_updated_time ?? null);
  }
  const report: CycleReport = {
    n: req.n,
    kind: req.kind,
    rules: loaded.ruleSet.rules.length,
    planned: enforced,
    audit: planned.audit,
    applied: counts.applied,
    stale: counts.stale,
    failed,
    deferred: unsent,
    errors,
    held: [...heldBack.keys()],
    requests: metrics.requestCount() - requestsBefore,
    durationMs: Date.now() - started,
    apply: settings.apply,
  };
  const ok = errors.length === 0 && failed === 0;
  // rules held back by their own data: the cycle did the rest, partly applied; anything else failed it
  const result: CycleOutcome["result"] =
    otherErrors.length > 0 || failed > 0 ? "failed" : heldBack.size > 0 ? "partial" : "ok";
  metrics.cycle(
    result,
    result === "failed" ? (otherErrors[0]?.message ?? `${failed} change(s) failed`) : undefined,
    heldBack,
  );
  logCycle(log, report);
  await appendCycleLog(ctx.paths.log, {
    at: startedAt.toISOString(),
    cycle: req.n,
    kind: req.kind,
    result,
    planned: report.planned,
    applied: report.applied,
    held: report.held,
    errors,
    folder: planFile ? basename(dirname(planFile)) : null,
  });
  logCycleChanges(log, { cycle: req.n }, outcomes, outcomes ? [] : sentChanges(plan.changes, Infinity));
  // what a stop left unsent is counted in the cycle's line, not listed: the next cycle plans it again
  const shownOutcomes = outcomes?.filter((o) => o.status !== "deferred" && o.status !== "already_done");
  // without outcomes, the planned changes: only those the lines show are made into a list
  const shown =
    shownOutcomes ??
    [...sentChanges(plan.changes, CHANGE_LINES_PER_CYCLE)].map((change) => ({
      change,
      status: "planned" as const,
    }));
  text(io, [
    cycleLine(report),
    ...errorLines(errors, ERROR_LINES_PER_CYCLE),
    ...changeLines(
      shown,
      CHANGE_LINES_PER_CYCLE,
      settings.apply ? "flowrules history --state DIR" : "--log-format json lists them all",
      shownOutcomes?.length ?? enforced,
    ),
  ]);
  const changedSomething = report.applied > 0 || (!settings.apply && plan.changes.length > 0);
  if (changedSomething || !ok) {
    const times = { startedAt, finishedAt: new Date() };
    await loaded.notify(
      settings.apply
        ? applyPayload(
            {
              plan,
              outcomes: outcomes ?? [],
              audit: report.audit,
              planFile,
              journalFile: planFile ? `${planFile}.journal.jsonl` : "",
            },
            times,
          )
        : planPayload(plan, times),
    );
  }
  return { bookmarks, result, held: heldBack, behind };
}

/**
 * The bookmarks after a cycle that settled everything it planned: for each workflow whose rules all planned or were
 * held back by their own data (the loop retries those on its back-off), the newest update its poll found; a workflow
 * with a rule the service failed stays behind, polled as changed.
 */
async function movedOn(
  ctx: CycleContext,
  plan: Plan,
  req: CycleRequest,
): Promise<{ bookmarks: Bookmarks; behind: Set<number> }> {
  const failedWorkflows = new Set(
    plan.errors.flatMap((e) => {
      if (HELD_CODES.has(e.code)) return [];
      const pid = e.rule ? ctx.workflowOf.get(e.rule) : undefined;
      return pid === undefined ? [] : [pid];
    }),
  );
  const workflows = { ...(ctx.bookmarks?.workflows ?? {}) };
  for (const [pid, t] of req.polled) if (!failedWorkflows.has(pid)) workflows[String(pid)] = t;
  // a workflow with no update at all has no newest instance: its bookmark is the plan's start, less a margin
  for (const pid of new Set(ctx.workflowOf.values())) {
    if (workflows[String(pid)] === undefined && !failedWorkflows.has(pid))
      workflows[String(pid)] = new Date(req.now.getTime() - 60_000).toISOString();
  }
  const next: Bookmarks = {
    format_version: 1,
    base_url: ctx.baseUrl,
    rules_digest: ctx.loaded.ruleSet.digest,
    workflows,
  };
  await writeBookmarks(ctx.paths.bookmarks, next);
  return { bookmarks: next, behind: failedWorkflows };
}
