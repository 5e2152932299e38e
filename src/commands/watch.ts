/**
 * `flowrules watch [paths...] --state DIR [--apply]`: continuous automation (docs/operating.md, State between runs, second part;
 * docs/watch.md). A loop over the same functions `plan` and `apply --auto-approve` use — planRuleSet, then
 * applyPlanInDir under the watcher's lock — with no second copy of either:
 *
 *   start   lock <state>/watch/lock (a second watcher refuses at once) → resume unfinished cycles from their journals
 *   cycle   plan with the state room (src/state: only what changed is read again; the plan equals a stateless one)
 *           → with --apply, apply its enforce changes exactly once (plan and journal under <state>/watch/cycles/)
 *           → bookmarks → log, notify. A cycle runs first, then whenever a poll finds an update, when a rule's
 *           active window opens, and every few minutes for rules whose meaning moves with time
 *   idle    one list per workflow with rules every interval (within --budget percent of the rate limit)
 *   stop    SIGTERM/SIGINT: no new request, the ones in flight finish, bookmarks written, lock released, exit 0
 *
 * Everything the watcher sends goes through one rate limiter (one process, one key, one budget).
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { join, resolve } from "node:path";
import { z } from "zod";
import { clientFrom, sharedLimiter, type ApiClient, type ClientOptions, type Grant, type LimiterWait, type RequestLimiter } from "../api/index.js";
import type { ClientSettings, ConnectionSettings } from "../api/connection.js";
import type { PlanningSettings, ProfileRef } from "../model/settings.js";
import type { RateLimitInfo } from "../api/rate-headers.js";
import { EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { acquireLock, describeTakeOver, LockHeldError, type HeldLock } from "../model/lock.js";
import { countOutcomes, type ChangeOutcome } from "../apply/outcome.js";
import { inactiveRules } from "../engine/active-rules.js";
import { resolveWorkflows } from "../engine/resolve.js";
import { newestUpdate, timeDependent } from "../engine/watch-poll.js";
import type { RuleSet } from "../rules/types.js";
import type { Plan } from "../plan/types.js";
import { errorMessage } from "../model/guards.js";
import { nullLogger } from "../log/index.js";
import type { CommandIO } from "../log/command-io.js";
import { applyPayload, planPayload } from "../render/notify/payload.js";
import { sendNotification, type NotifySettings } from "./notify.js";
import { loadRuleSetOrReport } from "./load.js";
import { planRuleSet } from "./planning.js";
import { applyPlanInDir, resumePlanFile, type AppliedResult } from "./apply.js";
import { DEFAULT_TIME_CYCLE_MS, MIN_INTERVAL_MS } from "./watch-settings.js";
import { startMetricsServer, WatchMetrics, type MetricsServer } from "./watch-http.js";

/** Longest wait between attempts while the service is down. */
const MAX_BACKOFF_MS = 5 * 60_000;
/** Finished cycle folders kept under <state>/watch/cycles (the newest; older ones are removed). */
const KEEP_CYCLES = 50;

export interface WatchCommandOptions {
  paths: string[];
  /** the planning settings of `plan` and `apply --auto-approve`, whole (src/cli/settings.ts) */
  planning: PlanningSettings;
  profile?: ProfileRef;
  stateDir: string;
  apply: boolean;
  /** --interval; derived from --budget when absent */
  intervalMs?: number;
  budgetPercent: number;
  metricsPort?: number;
  metricsHost: string;
  notify?: NotifySettings;
  connection: ConnectionSettings;
  /** aborted on SIGTERM/SIGINT */
  signal: AbortSignal;
  cwd?: string;
  /** the lower bound of the interval (default MIN_INTERVAL_MS; tests lower it through MIN_INTERVAL_ENV) */
  minIntervalMs?: number;
  /** rules whose meaning moves with time get a cycle at least this often (default DEFAULT_TIME_CYCLE_MS) */
  timeCycleMs?: number;
  /** stop after this many cycles (tests); default: until stopped */
  maxCycles?: number;
  /** told the metrics port once it listens (tests use port 0) */
  onListening?: (port: number) => void;
  tuning?: { verifyDelayMs?: number; client?: Partial<Omit<ClientOptions, "baseUrl" | "apiKey">> };
}

// ---- the watcher's own files --------------------------------------------------------------------------------------

const BookmarksSchema = z.object({
  format_version: z.literal(1),
  base_url: z.string(),
  rules_digest: z.string(),
  /** workflow id → the newest last_updated_time seen (the service's clock) */
  workflows: z.record(z.string(), z.string()),
});
type Bookmarks = z.infer<typeof BookmarksSchema>;

interface Paths {
  root: string;
  lock: string;
  bookmarks: string;
  cycles: string;
}

function watchPaths(stateDir: string): Paths {
  const root = join(stateDir, "watch");
  return { root, lock: join(root, "lock"), bookmarks: join(root, "bookmarks.json"), cycles: join(root, "cycles") };
}

async function readBookmarks(file: string, baseUrl: string): Promise<Bookmarks | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined; // unreadable: a cycle runs at once and rewrites it
  }
  const b = BookmarksSchema.safeParse(parsed);
  if (!b.success) return undefined;
  if (b.data.base_url.replace(/\/+$/, "") !== baseUrl.replace(/\/+$/, "")) {
    throw new UserError(`the state dir was made for ${b.data.base_url}, not ${baseUrl}: give each service its own --state`);
  }
  return b.data;
}

/** Atomically: a crash leaves the previous bookmarks. */
async function writeBookmarks(file: string, b: Bookmarks): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(b, null, 2)}\n`);
  await rename(tmp, file);
}

/** A cycle folder whose journal has no `finish` line: killed while applying. */
async function unfinishedCycles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const plan = join(dir, n, "plan.json");
    if (!existsSync(plan)) continue;
    const journal = await readFile(`${plan}.journal.jsonl`, "utf8").catch(() => "");
    if (!journal.includes('"event":"finish"')) out.push(plan);
  }
  return out;
}

async function pruneCycles(dir: string): Promise<void> {
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  for (const n of names.slice(0, Math.max(0, names.length - KEEP_CYCLES))) {
    const journal = await readFile(join(dir, n, "plan.json.journal.jsonl"), "utf8").catch(() => "");
    if (journal.includes('"event":"finish"')) await rm(join(dir, n), { recursive: true, force: true });
  }
}

// ---- stopping ----------------------------------------------------------------------------------------------------

/** Once stopping, no request starts: acquire() refuses; the ones already granted finish. */
class StoppingLimiter implements RequestLimiter {
  constructor(
    private readonly inner: RequestLimiter,
    private readonly signal: AbortSignal,
  ) {}

  acquire(): Promise<Grant> {
    if (this.signal.aborted) return Promise.reject(new StoppedError());
    const grant = this.inner.acquire();
    // a request waiting for its slot (up to a whole window) gives up at once when the watcher stops; a slot granted
    // after that is handed back unused
    return new Promise<Grant>((resolve, reject) => {
      const onAbort = (): void => reject(new StoppedError());
      this.signal.addEventListener("abort", onAbort, { once: true });
      grant.then(
        (g) => {
          this.signal.removeEventListener("abort", onAbort);
          if (this.signal.aborted) {
            this.inner.finished(g.ticket, {});
            reject(new StoppedError());
          } else resolve(g);
        },
        (err: unknown) => {
          this.signal.removeEventListener("abort", onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
  pause(ms: number): void {
    this.inner.pause(ms);
  }
  pausedFor(): number {
    return this.inner.pausedFor();
  }
  quotaFor(): number {
    return this.inner.quotaFor();
  }
  finished(ticket: number, info: RateLimitInfo): void {
    this.inner.finished(ticket, info);
  }
  subscribe(onWait: (w: LimiterWait) => void): () => void {
    return this.inner.subscribe?.(onWait) ?? (() => undefined);
  }
}

class StoppedError extends Error {
  constructor() {
    super("stopping: no new request");
  }
}

/**
 * A full collection, between cycles. Each cycle reads the state, plans and drops it all; V8 lets the old generation
 * grow to several times what is live before it collects in full (docs/performance.md, "Memory"), so a watcher's
 * resident set would creep up over hours. Measured at 100,000 instances: 172 → 229 MB over five minutes without it,
 * flat under 150 MB with it (docs/watch.md). The collector is reached without a command-line flag.
 */
const fullCollection: () => void = (() => {
  try {
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    if (typeof gc === "function") return () => void (gc as () => void)();
  } catch {
    // not available: V8 collects on its own schedule
  }
  return () => undefined;
})();

/** Resolves after `ms`, or at once when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((done) => {
    const t = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(t);
      signal.removeEventListener("abort", finish);
      done();
    }
    signal.addEventListener("abort", finish, { once: true });
  });
}

// ---- the interval ------------------------------------------------------------------------------------------------

/**
 * Idle cost: one request per workflow per poll. Within `budget` percent of the limit (requests a minute) that is a
 * poll every 60 s · workflows / (limit · budget / 100); never below the minimum. No limit (0): the minimum.
 */
export function derivedIntervalMs(workflows: number, ratePerMin: number, budgetPercent: number, minMs: number): number {
  if (!(ratePerMin > 0) || workflows === 0) return minMs;
  // 5 % under the budget, whole seconds: the polls' own reads when they find an update stay within it too
  const perMin = (ratePerMin * budgetPercent * 0.95) / 100;
  return Math.max(minMs, Math.ceil((60_000 * workflows) / perMin / 1000) * 1000);
}

// ---- the command -------------------------------------------------------------------------------------------------

interface CycleSummary {
  /** why the cycle ran: first, update (a poll found one), window (a rule's active window opened), time */
  kind: "first" | "update" | "window" | "time";
  rules: number;
  planned: number;
  audit: number;
  applied: number;
  stale: number;
  failed: number;
  errors: string[];
  requests: number;
}

export async function watchCommand(opts: WatchCommandOptions, io: CommandIO): Promise<number> {
  const cwd = opts.cwd ?? process.cwd();
  const stateDir = resolve(cwd, opts.stateDir);
  const paths = watchPaths(stateDir);
  const log = io.log ?? nullLogger;
  const text = (line: string): void => {
    if (!log.structured) io.stderr(`${line}\n`);
  };

  const ruleSet = await loadRuleSetOrReport(opts.paths, opts.planning.rules, io);
  if (!ruleSet) return EXIT_ERROR;

  await mkdir(paths.root, { recursive: true });
  let lock: HeldLock;
  try {
    lock = acquireLock(paths.lock, { applying: `watch ${opts.paths.join(" ")}`, timeoutMs: 30 * 60_000 });
  } catch (err) {
    if (err instanceof LockHeldError) {
      throw new UserError(`another watcher uses the state dir ${opts.stateDir}: ${err.holder.replace(/^another apply holds the lock [^:]*: /, "")}`);
    }
    throw err;
  }
  let server: MetricsServer | undefined;
  try {
    lock.startHeartbeat();
    if (lock.tookOver) text(`flowrules: ${describeTakeOver(paths.lock, lock.tookOver)}`);
    let bookmarks = await readBookmarks(paths.bookmarks, opts.connection.baseUrl);
    if (bookmarks && bookmarks.rules_digest !== ruleSet.digest) {
      // the state room reads their workflows in full (src/state); the watcher runs a cycle at once
      bookmarks = { ...bookmarks, workflows: {} };
    }

    const limiter = new StoppingLimiter(
      opts.tuning?.client?.limiter ?? sharedLimiter(opts.connection, opts.tuning?.client?.rateLimitWindowMs),
      opts.signal,
    );
    const started = Date.now();
    const minMs = opts.minIntervalMs ?? MIN_INTERVAL_MS;
    // the interval needs the workflows; until they are known, the rules' count of distinct written workflows
    const written = new Set(ruleSet.rules.map((r) => JSON.stringify(r.workflow))).size;
    let intervalMs = opts.intervalMs ?? derivedIntervalMs(written, opts.connection.rateLimitPerMin, opts.budgetPercent, minMs);
    const metrics = new WatchMetrics(intervalMs, started);
    const connection: ClientSettings = { ...opts.connection, observe: (e) => metrics.clientEvent(e) };
    const client = clientFrom(connection, { ...opts.tuning?.client, limiter });
    if (opts.metricsPort !== undefined) {
      server = await startMetricsServer(metrics, opts.metricsHost, opts.metricsPort);
      opts.onListening?.(server.port);
      text(`flowrules: metrics on http://${opts.metricsHost.includes(":") ? `[${opts.metricsHost}]` : opts.metricsHost}:${server.port}/metrics and /healthz`);
    }
    log.event("watch.started", { state: opts.stateDir, apply: opts.apply, rules: ruleSet.rules.length, base_url: client.baseUrl, ...(server ? { metrics_port: server.port } : {}) });

    const w = new Watcher(opts, io, ruleSet, client, connection, limiter, metrics, paths, lock, bookmarks, cwd, stateDir);
    try {
      intervalMs = await w.run(intervalMs, minMs);
    } finally {
      await client.close();
    }
    log.event("watch.stopped", { cycles: w.cycles, interval_ms: intervalMs });
    text(`flowrules: watcher stopped after ${w.cycles} cycle${w.cycles === 1 ? "" : "s"}; state written to ${opts.stateDir}`);
    return EXIT_OK;
  } finally {
    await server?.close();
    lock.release();
  }
}

class Watcher {
  cycles = 0;
  private workflowOf = new Map<string, number>();
  private unresolved = new Set<string>();
  private wasInactive = new Set<string>();
  private failures = 0;
  private lastCycleAt = 0;

  constructor(
    private readonly opts: WatchCommandOptions,
    private readonly io: CommandIO,
    private readonly ruleSet: RuleSet,
    private readonly client: ApiClient,
    private readonly connection: ConnectionSettings,
    private readonly limiter: RequestLimiter,
    private readonly metrics: WatchMetrics,
    private readonly paths: Paths,
    private readonly lock: HeldLock,
    private bookmarks: Bookmarks | undefined,
    private readonly cwd: string,
    private readonly stateDir: string,
  ) {}

  private get log() {
    return this.io.log ?? nullLogger;
  }

  private text(line: string): void {
    if (!this.log.structured) this.io.stderr(`${line}\n`);
  }

  /** Runs until stopped; returns the interval in effect. */
  async run(initialIntervalMs: number, minMs: number): Promise<number> {
    const { signal } = this.opts;
    let intervalMs = initialIntervalMs;
    let resolvedOnce = false;
    if (this.opts.apply) await this.resumeUnfinished();
    while (!signal.aborted) {
      if (this.opts.maxCycles !== undefined && this.cycles >= this.opts.maxCycles) break;
      try {
        if (!resolvedOnce) {
          await this.resolve();
          resolvedOnce = true;
          if (this.opts.intervalMs === undefined) {
            intervalMs = derivedIntervalMs(new Set(this.workflowOf.values()).size, this.opts.connection.rateLimitPerMin, this.opts.budgetPercent, minMs);
          }
          this.metrics.intervalMs = intervalMs;
          const workflows = new Set(this.workflowOf.values()).size;
          this.log.event("watch.interval", { interval_ms: intervalMs, workflows, budget_percent: this.opts.budgetPercent });
          this.text(
            `flowrules: watching ${this.ruleSet.rules.length} rule${this.ruleSet.rules.length === 1 ? "" : "s"} of ${workflows} workflow${workflows === 1 ? "" : "s"}, ` +
              `polling every ${(intervalMs / 1000).toFixed(1)} s${this.opts.apply ? "" : " (no --apply: nothing is sent)"}`,
          );
        }
        const didCycle = await this.step();
        this.failures = 0;
        if (!didCycle) this.metrics.cycle("idle");
      } catch (err) {
        if (signal.aborted) break;
        this.failures += 1;
        const message = errorMessage(err);
        this.metrics.cycle("failed", message);
        const backoff = Math.min(MAX_BACKOFF_MS, intervalMs * 2 ** Math.min(this.failures - 1, 10));
        this.log.event("watch.failed", { error: message, failures: this.failures, retry_in_ms: backoff }, "error");
        this.text(`${new Date().toISOString()} watch: cycle failed (${message}); trying again in ${Math.round(backoff / 1000)} s`);
        await pause(backoff, signal);
        continue;
      }
      await pause(intervalMs, signal);
    }
    await this.saveBookmarks();
    return intervalMs;
  }

  /** Unfinished cycles of a watcher killed while applying: resumed from their journals, nothing sent twice. */
  private async resumeUnfinished(): Promise<void> {
    for (const planFile of await unfinishedCycles(this.paths.cycles)) {
      if (this.opts.signal.aborted) return;
      this.text(`flowrules: resuming the unfinished cycle ${planFile} from its journal`);
      let result: AppliedResult | undefined;
      await resumePlanFile(planFile, this.applyOptions((r) => (result = r)), this.quietIO(), this.lock);
      if (result) this.count(result.outcomes);
      this.log.event("watch.resumed", { plan_file: planFile, ...(result ? countOutcomes(result.outcomes) : {}) });
    }
  }

  private async resolve(): Promise<void> {
    const resolved = await resolveWorkflows(this.client, this.ruleSet.rules);
    for (const r of this.ruleSet.rules) {
      const x = resolved.get(r.name);
      if (x && "id" in x) this.workflowOf.set(r.name, x.id);
      else this.unresolved.add(r.name);
    }
  }

  private saveBookmarks(): Promise<void> {
    if (!this.bookmarks) return Promise.resolve();
    return writeBookmarks(this.paths.bookmarks, this.bookmarks);
  }

  /** One poll and, when it found something to do, one cycle. False when idle. */
  private async step(): Promise<boolean> {
    const now = new Date();
    const inactive = inactiveRules(this.ruleSet.rules, now);
    const active = this.ruleSet.rules.filter((r) => !inactive.has(r.name));
    const opened = active.some((r) => this.wasInactive.has(r.name));
    this.wasInactive = new Set(inactive.keys());
    const timeDue = active.some(timeDependent) && now.getTime() - this.lastCycleAt >= (this.opts.timeCycleMs ?? DEFAULT_TIME_CYCLE_MS);
    const b = this.bookmarks;
    // polled before the plan: an update during the plan is found again by the next poll
    const polled = new Map<number, string>();
    let updated = false;
    let first = b === undefined;
    const workflows = new Set(active.flatMap((r) => {
      const pid = this.workflowOf.get(r.name);
      return pid === undefined ? [] : [pid];
    }));
    await Promise.all(
      [...workflows].map(async (pid) => {
        const after = b?.workflows[String(pid)];
        this.metrics.poll();
        const newest = await newestUpdate(this.client, pid, after);
        if (newest) polled.set(pid, newest.last_updated_time);
        if (newest) updated = true;
        if (after === undefined) first = true;
      }),
    );
    const kind: CycleSummary["kind"] | undefined =
      first || (this.cycles === 0 && this.unresolved.size > 0) ? "first" : updated ? "update" : opened ? "window" : timeDue ? "time" : undefined;
    this.log.event("watch.poll", { workflows: workflows.size, updated: [...polled.keys()], ...(kind ? { cycle: kind } : {}) }, "debug");
    if (kind === undefined) return false;
    await this.cycle(kind, polled, now);
    fullCollection();
    return true;
  }

  private async cycle(kind: CycleSummary["kind"], polled: ReadonlyMap<number, string>, now: Date): Promise<void> {
    const started = Date.now();
    const startedAt = new Date();
    this.cycles += 1;
    this.lastCycleAt = now.getTime();
    const n = this.cycles;
    const requestsBefore = this.requestCount();
    const plan = await planRuleSet(this.ruleSet, this.connection, this.quietIO(), {
      // the run's planning settings as `plan` has them; --full-refresh holds for the first cycle only
      ...this.opts.planning,
      state: this.stateDir,
      fullRefresh: n === 1 && this.opts.planning.fullRefresh === true,
      ...(this.opts.profile ? { profile: this.opts.profile } : {}),
      quiet: !this.log.structured,
      limiter: this.limiter,
      recordSeen: this.opts.apply,
    });
    if (this.opts.signal.aborted) throw new StoppedError();
    const errors = plan.errors.map((e) => e.message);
    const enforce = plan.changes.filter((c) => c.audit !== true);
    const audit = plan.changes.length - enforce.length;
    let outcomes: ChangeOutcome[] = [];
    let planFile = "";
    if (this.opts.apply && enforce.length > 0) {
      // a rule that failed this cycle (over its limit, an API error) has no change in the plan; the others go on
      const applicable: Plan = { ...plan, errors: [] };
      const dir = join(this.paths.cycles, `${plan.created_at.replace(/[:.]/g, "-")}-${process.pid}-${n}`);
      planFile = join(dir, "plan.json");
      await applyPlanInDir(applicable, dir, this.applyOptions((r) => (outcomes = r.outcomes)), this.quietIO(), this.lock);
      this.count(outcomes);
      await pruneCycles(this.paths.cycles);
    }
    const counts = countOutcomes(outcomes);
    const failed = counts.failed + counts.not_acted;
    // changes left unsent (stopped, deferred) are planned again: the bookmarks stay where they were
    const unsent = counts.not_started + counts.deferred;
    const summary: CycleSummary = {
      kind,
      rules: this.ruleSet.rules.length,
      planned: enforce.length,
      audit,
      applied: counts.applied,
      stale: counts.stale,
      failed,
      errors,
      requests: this.requestCount() - requestsBefore,
    };
    // bookmarks move on for the workflows whose rules all planned (a failing rule's workflow is polled as changed)
    const failedWorkflows = new Set(plan.errors.flatMap((e) => {
      const pid = e.rule ? this.workflowOf.get(e.rule) : undefined;
      return pid === undefined ? [] : [pid];
    }));
    if (failed === 0 && unsent === 0) {
      const next: Bookmarks = this.bookmarks ?? { format_version: 1, base_url: this.client.baseUrl, rules_digest: this.ruleSet.digest, workflows: {} };
      const workflows = { ...next.workflows };
      for (const [pid, t] of polled) if (!failedWorkflows.has(pid)) workflows[String(pid)] = t;
      // a workflow with no update at all has no newest instance: its bookmark is the plan's start, less a margin
      for (const pid of new Set(this.workflowOf.values())) {
        if (workflows[String(pid)] === undefined && !failedWorkflows.has(pid)) workflows[String(pid)] = new Date(now.getTime() - 60_000).toISOString();
      }
      this.bookmarks = { ...next, workflows };
      await this.saveBookmarks();
    }
    const ok = errors.length === 0 && failed === 0;
    this.metrics.cycle(ok ? "ok" : "failed", ok ? undefined : (errors[0] ?? `${failed} change(s) failed`));
    const ms = Date.now() - started;
    this.log.event(
      "watch.cycle",
      { cycle: n, kind, rules: summary.rules, planned: summary.planned, audit, applied: summary.applied, stale: summary.stale, failed, errors, requests: summary.requests, duration_ms: ms, apply: this.opts.apply },
      ok ? "info" : "error",
    );
    this.text(cycleLine(n, summary, this.opts.apply, ms));
    const changedSomething = summary.applied > 0 || (!this.opts.apply && plan.changes.length > 0);
    if (changedSomething || !ok) {
      const times = { startedAt, finishedAt: new Date() };
      const payload = this.opts.apply
        ? applyPayload({ plan, outcomes, audit, planFile, journalFile: planFile ? `${planFile}.journal.jsonl` : "" }, times)
        : planPayload(plan, times);
      await sendNotification(this.opts.notify, payload, this.io);
    }
  }

  private count(outcomes: ChangeOutcome[]): void {
    for (const o of outcomes) {
      if (o.status === "applied") this.metrics.changeApplied(o.change.rule, o.change.kind);
      else if (o.status === "stale") this.metrics.changeStale();
      else if (o.status === "failed" || o.status === "not_acted") this.metrics.changeFailed();
    }
  }

  private requestCount(): number {
    return this.metrics.families().find((f) => f.name === "requests_total")?.samples.reduce((a, s) => a + s.value, 0) ?? 0;
  }

  /** The apply's own lines and summary stay out of the watcher's output: one line per cycle says it all. */
  private quietIO(): CommandIO {
    return { ...this.io, stdout: () => undefined, stderr: () => undefined };
  }

  private applyOptions(onResult: (r: AppliedResult) => void) {
    return {
      paths: [],
      autoApprove: true,
      detailedExitcode: false,
      quiet: !this.log.structured,
      rules: [],
      connection: this.connection,
      cwd: this.cwd,
      signal: this.opts.signal,
      limiter: this.limiter,
      onResult,
      ...(this.opts.tuning ? { tuning: { ...(this.opts.tuning.verifyDelayMs !== undefined ? { verifyDelayMs: this.opts.tuning.verifyDelayMs } : {}), ...(this.opts.tuning.client ? { client: this.opts.tuning.client } : {}) } } : {}),
    };
  }
}

function cycleLine(n: number, s: CycleSummary, apply: boolean, ms: number): string {
  const parts = [`${s.planned} planned`];
  if (apply) parts.push(`${s.applied} applied`, `${s.stale} stale`, `${s.failed} failed`);
  else parts.push("not applied (no --apply)");
  if (s.audit > 0) parts.push(`${s.audit} audit`);
  if (s.errors.length > 0) parts.push(`${s.errors.length} error${s.errors.length === 1 ? "" : "s"}: ${s.errors[0] ?? ""}`);
  return `${new Date().toISOString()} cycle ${n} (${s.kind}, ${s.rules} rule${s.rules === 1 ? "" : "s"}): ${parts.join(", ")}; ${s.requests} requests, ${(ms / 1000).toFixed(1)} s`;
}
