/**
 * The watcher's loop (docs/watch.md), after controller-runtime's split of loop, queue, metrics and reconciler:
 *
 *   start   (./index.ts) the rules loaded, the lock taken, the bookmarks read, the metrics served
 *   resume  with --apply, each cycle a killed watcher left unfinished, from its journal (./cycle.ts)
 *   reload  SIGHUP, or the rule files or the config file changed on disk (./fingerprint.ts): loaded again between
 *           cycles; one that does not validate keeps the rules before, said and counted
 *   poll    one list per workflow with rules, for updates since its bookmark (./poll.ts)
 *   cycle   when a poll found one, first, after a reload, when a window opens, and every few minutes for rules that
 *           move with time (./cycle.ts)
 *   idle    the interval (within --budget percent of the rate limit), cut short by a stop or a reload request
 *   stop    the stop signal: no new request, those in flight finish, bookmarks written; the caller releases the lock
 *
 * Every request goes through the one rate limiter of the process (one key, one budget), which gives up waiting at
 * once on a stop (src/api/rate-limiter.ts).
 */
import type { ApiClient, ClientSettings, RequestLimiter } from "../api/index.js";
import type { HeldLock } from "../fs/lock.js";
import { inactiveRules } from "../engine/active-rules.js";
import { resolveWorkflows } from "../engine/resolve.js";
import { nullLogger, type Logger } from "../log/index.js";
import { errorMessage } from "../model/guards.js";
import {
  cycleFailedLine,
  retryLine,
  needsRestartLine,
  reloadedLine,
  reloadFailedLine,
  watchingLine,
  type CycleReport,
} from "../render/watch/text.js";
import { forRules, writeBookmarks, type Bookmarks } from "./bookmarks.js";
import { resumeCycle, runCycle, StoppingError, type CycleContext } from "./cycle.js";
import { unfinishedCycles, type WatchPaths } from "./cycles.js";
import { fingerprint } from "./fingerprint.js";
import { fullCollection } from "./gc.js";
import type { WatchMetrics } from "./metrics.js";
import { pollWorkflow, timeDependent, type Listed } from "./poll.js";
import { backoffMs, derivedIntervalMs, MAX_BACKOFF_MS, pollGapMs } from "./settings.js";
import type { Loaded, WatcherParts, WatcherSettings } from "./types.js";

/** What the start (./index.ts) hands the loop. */
export interface Started {
  loaded: Loaded;
  /** the fingerprint of the watched files, taken before `loaded` was read */
  fingerprint: string;
  bookmarks: Bookmarks | undefined;
  client: ApiClient;
  connection: ClientSettings;
  limiter: RequestLimiter;
  lock: HeldLock;
  metrics: WatchMetrics;
  paths: WatchPaths;
}

/** Reloads asked within this long of the last one are gathered into one. */
export const RELOAD_GATHER_MS = 1000;

export class Watcher {
  cycles = 0;
  private loaded: Loaded;
  private bookmarks: Bookmarks | undefined;
  /** state-cache: the watcher's own writes since its bookmarks, per workflow (a poll that finds only them is idle) */
  private readonly own = new Map<number, Map<number, string | null>>();
  /** state-cache: per workflow, from when the next cycle's state lists changes (./poll.ts, pollWorkflow) */
  private changesFrom = new Map<number, string>();
  private lastFingerprint: string;
  private workflowOf = new Map<string, number>();
  private unresolved = new Set<string>();
  private resolved = false;
  private resumed = false;
  private reloadPending = false;
  private wasInactive = new Set<string>();
  private failures = 0;
  /** cycles in a row that were not ok (failed, or held rules back): the retry's back-off grows with them */
  private notOk = 0;
  /** after a cycle that was not ok: when the retry is due, and the workflows whose finds wait for it */
  private retry: { at: number; behind: ReadonlySet<number> } | undefined;
  private lastCycleAt = 0;
  /** when the last poll started (0: none yet): polls, a reload's included, keep an interval apart */
  private lastPollAt = 0;
  /** when the last reload read the files (0: none yet) */
  private lastReloadAt = 0;
  private intervalMs: number;
  /** the wait after the last poll: the interval, longer when that poll's reads took it past the budget */
  private gapMs: number;

  constructor(
    private readonly settings: WatcherSettings,
    private readonly parts: WatcherParts,
    private readonly run: Started,
  ) {
    this.loaded = run.loaded;
    this.bookmarks = forRules(run.bookmarks, run.loaded.ruleSet.digest);
    this.lastFingerprint = run.fingerprint;
    // until the workflows are resolved: the rules' count of distinct written workflows
    this.intervalMs = this.interval(new Set(this.loaded.ruleSet.rules.map((r) => JSON.stringify(r.workflow))).size);
    this.gapMs = this.intervalMs;
    run.metrics.intervalMs = this.intervalMs;
    run.metrics.rulesLoaded(this.loaded.ruleSet.rules.length, this.loaded.ruleSet.digest);
  }

  private get log(): Logger {
    return this.parts.io.log ?? nullLogger;
  }

  private text(line: string): void {
    if (!this.log.structured) this.parts.io.stderr(`${line}\n`);
  }

  private get stop(): AbortSignal {
    return this.parts.signal;
  }

  private interval(workflows: number): number {
    const s = this.settings;
    return (
      s.intervalMs ??
      derivedIntervalMs(workflows, this.loaded.connection.rateLimitPerMin, s.budgetPercent, s.minIntervalMs)
    );
  }

  private context(): CycleContext {
    const r = this.run;
    return {
      settings: this.settings,
      io: this.parts.io,
      stop: this.stop,
      loaded: this.loaded,
      connection: r.connection,
      limiter: r.limiter,
      lock: r.lock,
      metrics: r.metrics,
      paths: r.paths,
      baseUrl: r.client.baseUrl,
      workflowOf: this.workflowOf,
      bookmarks: this.bookmarks,
      own: this.own,
    };
  }

  /** Runs until stopped (or maxCycles); the bookmarks are written on the way out. */
  async runUntilStopped(): Promise<void> {
    while (!this.stop.aborted) {
      if (this.settings.maxCycles !== undefined && this.cycles >= this.settings.maxCycles) break;
      try {
        if (!this.resumed) {
          // inside the loop: a resume the service refuses is tried again, and a stop during it is a stop
          if (this.settings.apply)
            for (const planFile of await unfinishedCycles(this.run.paths.cycles))
              if (!this.stop.aborted) await resumeCycle(this.context(), planFile);
          this.resumed = true;
        }
        await this.reloadIfAsked();
        // a SIGHUP wakes the loop, but its poll (and a new rules' resolve) waits for the interval since the last
        // one: 50 SIGHUPs in 2.5 s sent 153 listings, outside --budget
        const early = this.lastPollAt + this.gapMs - Date.now();
        if (this.lastPollAt > 0 && early > 0) {
          await this.parts.reloads.pause(early, this.stop);
          continue;
        }
        if (!this.resolved) await this.resolve();
        this.lastPollAt = Date.now();
        const didCycle = await this.step();
        this.failures = 0;
        if (!didCycle) this.run.metrics.cycle("idle");
      } catch (err) {
        if (this.stop.aborted || err instanceof StoppingError) break;
        this.failures += 1;
        const message = errorMessage(err);
        this.run.metrics.cycle("failed", message);
        const maxBackoff = this.settings.maxBackoffMs ?? MAX_BACKOFF_MS;
        const backoff = backoffMs(this.intervalMs, this.failures, maxBackoff);
        // liveness fails only when the process cannot work: still failing at the longest back-off, or a state dir
        // it cannot write (docs/watch.md, "/metrics, /healthz and /readyz")
        this.run.metrics.failing(this.failures > 1 && backoff >= maxBackoff, stateDirProblem(err));
        this.log.event("watch.failed", { error: message, failures: this.failures, retry_in_ms: backoff }, "error");
        this.text(cycleFailedLine(message, backoff));
        await this.parts.reloads.pause(backoff, this.stop);
        continue;
      }
      await this.parts.reloads.pause(this.gapMs, this.stop);
    }
    if (this.bookmarks) await writeBookmarks(this.run.paths.bookmarks, this.bookmarks);
  }

  /** The workflows of the rules (once, and after each reload), and the interval that follows from their number. */
  private async resolve(): Promise<void> {
    const rules = this.loaded.ruleSet.rules;
    const resolved = await resolveWorkflows(this.run.client, rules);
    this.workflowOf = new Map();
    this.unresolved = new Set();
    for (const r of rules) {
      const x = resolved.get(r.name);
      if (x && "id" in x) this.workflowOf.set(r.name, x.id);
      else this.unresolved.add(r.name);
    }
    this.resolved = true;
    const workflows = new Set(this.workflowOf.values()).size;
    this.intervalMs = this.interval(workflows);
    this.gapMs = this.intervalMs;
    this.run.metrics.intervalMs = this.intervalMs;
    this.log.event("watch.interval", {
      interval_ms: this.intervalMs,
      workflows,
      budget_percent: this.settings.budgetPercent,
    });
    this.text(watchingLine(rules.length, workflows, this.intervalMs, this.settings.apply));
  }

  /**
   * Between cycles: a reload when SIGHUP asked for one or the watched files changed. The fingerprint is taken before
   * reading, so an edit made while the rules are read is found by the next look.
   */
  private async reloadIfAsked(): Promise<void> {
    // reloads coalesced: a burst of SIGHUPs within RELOAD_GATHER_MS of the last reload is read once, after it
    const since = Date.now() - this.lastReloadAt;
    if (this.lastReloadAt > 0 && since < RELOAD_GATHER_MS && this.parts.reloads.pending())
      await this.parts.reloads.gather(RELOAD_GATHER_MS - since, this.stop);
    if (this.stop.aborted) return;
    const now = await fingerprint(this.settings.watched, this.settings.cwd);
    const asked = this.parts.reloads.take();
    if (asked === undefined && now === this.lastFingerprint) return;
    this.lastReloadAt = Date.now();
    const why = asked ?? "the rule files or the config file changed";
    this.lastFingerprint = now;
    let loaded: Loaded | undefined;
    try {
      loaded = await this.parts.load();
    } catch (err) {
      // a config file that does not parse: its one line, as the start would say it
      const message = errorMessage(err);
      this.log.event("watch.reload_problem", { message }, "error");
      this.text(`flowrules: ${message}`);
    }
    if (!loaded) {
      this.run.metrics.reloaded(false);
      const kept = this.loaded.ruleSet.rules.length;
      this.log.event("watch.reload_failed", { why, kept_rules: kept, digest: this.loaded.ruleSet.digest }, "error");
      this.text(reloadFailedLine(why, kept));
      return;
    }
    this.run.metrics.reloaded(true);
    const before = this.loaded;
    const changed = loaded.ruleSet.digest !== before.ruleSet.digest || loaded.planningKey !== before.planningKey;
    const restart = connectionChanges(before, loaded);
    // the watcher keeps its connection: its state dir, lock and budget are one service's
    this.loaded = { ...loaded, connection: before.connection };
    this.run.metrics.rulesLoaded(loaded.ruleSet.rules.length, loaded.ruleSet.digest);
    this.log.event("watch.reloaded", {
      why,
      rules: loaded.ruleSet.rules.length,
      digest: loaded.ruleSet.digest,
      changed,
      ...(restart.length > 0 ? { needs_restart: restart } : {}),
    });
    this.text(reloadedLine(why, loaded.ruleSet.rules.length, loaded.ruleSet.digest, changed));
    if (restart.length > 0) this.text(needsRestartLine(restart));
    if (changed) {
      // new rules may select other workflows, and what they plan is planned at once
      this.bookmarks = forRules(this.bookmarks, loaded.ruleSet.digest);
      this.resolved = false;
      this.reloadPending = true;
    }
  }

  /** One poll and, when it found something to do, one cycle. False when idle. */
  private async step(): Promise<boolean> {
    const now = new Date();
    const rules = this.loaded.ruleSet.rules;
    const inactive = inactiveRules(rules, now);
    const active = rules.filter((r) => !inactive.has(r.name));
    const opened = active.some((r) => this.wasInactive.has(r.name));
    this.wasInactive = new Set(inactive.keys());
    const timeDue = active.some(timeDependent) && now.getTime() - this.lastCycleAt >= this.settings.timeCycleMs;
    const b = this.bookmarks;
    // polled before the plan: an update during the plan is found again by the next poll
    const polled = new Map<number, string>();
    const retry = this.retry;
    const retryDue = retry !== undefined && now.getTime() >= retry.at;
    let updated = false;
    let first = b === undefined;
    const workflows = new Set(
      active.flatMap((r) => {
        const pid = this.workflowOf.get(r.name);
        return pid === undefined ? [] : [pid];
      }),
    );
    const polledFrom = this.run.metrics.requestCount();
    const listed = new Map<number, Listed>();
    await Promise.all(
      [...workflows].map(async (pid) => {
        const after = b?.workflows[String(pid)];
        this.run.metrics.poll();
        const got = await pollWorkflow(this.run.client, pid, after, this.own.get(pid), this.changesFrom.get(pid));
        if (got.listed) listed.set(pid, got.listed);
        if (got.idle) this.changesFrom.delete(pid);
        const newest = got.newest;
        if (newest) {
          polled.set(pid, newest.last_updated_time);
          // state-cache: the watcher's own writes are no update; a workflow a failed cycle left behind waits for
          // the retry (its finds are the ones that failed, found again at every poll)
          if (!newest.ours && !(retry !== undefined && !retryDue && retry.behind.has(pid))) updated = true;
        }
        if (after === undefined) first = true;
      }),
    );
    // a derived interval keeps polling within --budget: a poll that read what it found waits longer (busy tenants)
    this.gapMs =
      this.settings.intervalMs === undefined
        ? pollGapMs(
            this.intervalMs,
            this.run.metrics.requestCount() - polledFrom,
            this.loaded.connection.rateLimitPerMin,
            this.settings.budgetPercent,
          )
        : this.intervalMs;
    // first: once, the watcher's first cycle (when there is anything without a bookmark to plan)
    const kind: CycleReport["kind"] | undefined = this.reloadPending
      ? "reload"
      : this.cycles === 0 && (first || this.unresolved.size > 0)
        ? "first"
        : updated
          ? "update"
          : retryDue
            ? "retry"
            : opened
              ? "window"
              : timeDue
                ? "time"
                : undefined;
    this.log.event(
      "watch.poll",
      { workflows: workflows.size, updated: [...polled.keys()], ...(kind ? { cycle: kind } : {}) },
      "debug",
    );
    if (kind === undefined) {
      // state-cache: only our own writes since the bookmarks: they move past them, no cycle (a workflow left behind
      // by a failed cycle keeps its bookmark for the retry)
      const ours = [...polled].filter(([pid]) => !(retry?.behind.has(pid) ?? false));
      if (ours.length > 0 && b) {
        this.bookmarks = {
          ...b,
          workflows: { ...b.workflows, ...Object.fromEntries(ours.map(([pid, t]) => [String(pid), t])) },
        };
        for (const [pid] of ours) this.own.delete(pid);
        await writeBookmarks(this.run.paths.bookmarks, this.bookmarks);
      }
      return false;
    }
    this.cycles += 1;
    this.lastCycleAt = now.getTime();
    this.reloadPending = false;
    const outcome = await runCycle(this.context(), { n: this.cycles, kind, polled, now, listed });
    this.bookmarks = outcome.bookmarks;
    this.changesFrom = new Map(outcome.changesFrom ?? []);
    if (outcome.result === "ok") {
      this.notOk = 0;
      this.retry = undefined;
    } else {
      // held rules and failed changes are tried again on a back-off, not at every poll
      this.notOk += 1;
      const cap = this.settings.maxBackoffMs ?? MAX_BACKOFF_MS;
      const wait = backoffMs(this.intervalMs, this.notOk, cap);
      this.retry = { at: Date.now() + wait, behind: outcome.behind };
      this.log.event(
        "watch.retry",
        { result: outcome.result, held: [...outcome.held.keys()], in_a_row: this.notOk, retry_in_ms: wait },
        "info",
      );
      this.text(retryLine(outcome.result, this.notOk, wait, cap));
    }
    fullCollection();
    return true;
  }
}

/** The state dir cannot be written (permissions, a full or read-only disk): the process cannot work. */
function stateDirProblem(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && ["EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT"].includes(code)
    ? errorMessage(err)
    : undefined;
}

/** What of the connection a reload changed (it takes effect at the next start only). */
function connectionChanges(before: Loaded, after: Loaded): string[] {
  const a = before.connection;
  const b = after.connection;
  const out: string[] = [];
  if (a.baseUrl !== b.baseUrl) out.push("the base URL");
  if (a.apiKey !== b.apiKey) out.push("the API key");
  if (a.rateLimitPerMin !== b.rateLimitPerMin) out.push("the rate limit");
  if (a.concurrency !== b.concurrency || a.timeoutMs !== b.timeoutMs || a.insecureHttp !== b.insecureHttp)
    out.push("the connection options");
  return out;
}
