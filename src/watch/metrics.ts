/**
 * What a watcher has done, as counters and gauges (docs/watch.md, "/metrics, /healthz and /readyz"), and what the
 * probes are told. Liveness (`/healthz`) fails only when the process cannot do its work: the service failing past the
 * back-off's cap, or the state dir unusable; a rule held back by its own data (over `max_instances`, a failing
 * expression) is a finding for a person, said by readiness (`/readyz`) and `flowrules_rules_held`, never a restart.
 * Every method is cheap and synchronous.
 */
import type { ClientEvent } from "../api/index.js";
import type { MetricFamily } from "../render/metrics/prometheus.js";

/** ok: everything planned was applied; partial: some rules held back by their own data, the others applied. */
export type CycleResult = "ok" | "partial" | "failed" | "idle";

export class WatchMetrics {
  private readonly cycles = new Map<CycleResult, number>([
    ["ok", 0],
    ["partial", 0],
    ["failed", 0],
    ["idle", 0],
  ]);
  /** rules held back by their own data in the last cycle that planned, with why (the first error of each) */
  private held = new Map<string, string>();
  /** the loop's back-off has reached its cap and the failures go on: the process cannot work */
  private failingPastBackoff = false;
  /** a write to the state dir failed (permissions, a full or read-only disk): the process cannot work */
  private stateProblem: string | undefined;
  private readonly applied = new Map<string, { rule: string; kind: string; n: number }>();
  private stale = 0;
  private failedChanges = 0;
  private readonly requests = new Map<string, number>();
  private requestsTotal = 0;
  private rateLimitWaits = 0;
  private polls = 0;
  private rules = { loaded: 0, digest: "" };
  private reloads = 0;
  private reloadFailures = 0;
  /** a first sync going on (the state's checkpoints): instances synced, of about how many, seconds left; null: none */
  private sync: { synced: number; total: number | null; leftS: number | null } | undefined;
  /** ms epoch of the last cycle that succeeded (ok or idle), undefined before */
  lastGoodAt: number | undefined;
  /** the last failure, in words */
  lastError: string | undefined;

  constructor(
    /** the poll interval in effect: /healthz fails after three of them without a good cycle */
    public intervalMs: number,
    private readonly startedAt: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A cycle or an idle poll; `held` (cycles that planned) replaces the rules held before. */
  cycle(result: CycleResult, error?: string, held?: ReadonlyMap<string, string>): void {
    this.cycles.set(result, (this.cycles.get(result) ?? 0) + 1);
    const t = this.now();
    if (held) this.held = new Map(held);
    if (result === "failed") this.lastError = error;
    else {
      this.lastGoodAt = t;
      this.lastError = undefined;
      this.failingPastBackoff = false;
      this.stateProblem = undefined;
    }
  }

  /** After a checkpoint of a sync (or its end: `done`): how far it got. */
  syncProgress(p: { synced: number; total: number | null; leftS: number | null } | undefined): void {
    this.sync = p;
  }

  /** The loop's word after a failure: whether its back-off is at its cap, and whether the state dir was the cause. */
  failing(pastBackoff: boolean, stateProblem?: string): void {
    this.failingPastBackoff = pastBackoff;
    if (stateProblem !== undefined) this.stateProblem = stateProblem;
  }

  /** The rules held back now, by name, with why. */
  heldRules(): ReadonlyMap<string, string> {
    return this.held;
  }

  poll(): void {
    this.polls += 1;
  }

  changeApplied(rule: string, kind: string): void {
    const key = `${rule}\u0000${kind}`;
    const e = this.applied.get(key) ?? { rule, kind, n: 0 };
    e.n += 1;
    this.applied.set(key, e);
  }

  changeStale(): void {
    this.stale += 1;
  }

  changeFailed(): void {
    this.failedChanges += 1;
  }

  /** Every client event of the watcher's clients (ConnectionSettings.observe). */
  clientEvent(e: ClientEvent): void {
    if (e.type === "request") {
      const status = e.status === 0 ? "none" : String(e.status);
      this.requests.set(status, (this.requests.get(status) ?? 0) + 1);
      this.requestsTotal += 1;
    } else if (e.type === "rate-limited") this.rateLimitWaits += 1;
  }

  /** HTTP exchanges so far (a cycle's requests are the difference). */
  requestCount(): number {
    return this.requestsTotal;
  }

  /** The rules in effect: their count and digest (at the start and after each reload that validated). */
  rulesLoaded(count: number, digest: string): void {
    this.rules = { loaded: count, digest };
  }

  reloaded(ok: boolean): void {
    if (ok) this.reloads += 1;
    else this.reloadFailures += 1;
  }

  /**
   * Liveness, 200 or 503 with the reason: 503 only when the process cannot work — the state dir unusable, or the
   * service failing with the back-off at its cap. Starting, failing for a while, rules held: 200.
   */
  health(): { status: 200 | 503; text: string } {
    const t = this.now();
    if (this.stateProblem !== undefined)
      return { status: 503, text: `the state dir is unusable: ${this.stateProblem}` };
    if (this.failingPastBackoff) {
      const since =
        this.lastGoodAt === undefined
          ? "no cycle succeeded yet"
          : `no cycle succeeded for ${Math.round((t - this.lastGoodAt) / 1000)} s`;
      return {
        status: 503,
        text: `${since}, retrying at the longest back-off${this.lastError ? `: ${this.lastError}` : ""}`,
      };
    }
    if (this.lastGoodAt === undefined)
      return {
        status: 200,
        text: this.lastError
          ? `ok: running, the first cycle is being retried: ${this.lastError}`
          : "ok: starting, the first cycle has not finished yet",
      };
    return {
      status: 200,
      text: `ok: last good cycle ${Math.round((t - this.lastGoodAt) / 1000)} s ago${this.lastError ? `; the last attempt failed, retrying: ${this.lastError}` : ""}`,
    };
  }

  /**
   * Readiness, 200 or 503 with the reason: ready when the watcher serves its purpose fully — a cycle has finished,
   * the last one did not fail, and no rule is held back by its own data.
   */
  ready(): { status: 200 | 503; text: string } {
    if (this.lastGoodAt === undefined)
      return {
        status: 503,
        text: this.lastError
          ? `not ready: no cycle succeeded yet: ${this.lastError}`
          : "not ready: the first cycle has not finished yet",
      };
    if (this.lastError !== undefined)
      return { status: 503, text: `not ready: the last cycle failed: ${this.lastError}` };
    if (this.held.size > 0) {
      const list = [...this.held].map(([rule, why]) => `${rule} (${why})`);
      const shown = list.slice(0, 10).join("; ");
      return {
        status: 503,
        text: `not ready: ${this.held.size} rule${this.held.size === 1 ? "" : "s"} held back: ${shown}${list.length > 10 ? `; … and ${list.length - 10} more` : ""}`,
      };
    }
    return { status: 200, text: "ready: every rule applied in the last cycle" };
  }

  families(): MetricFamily[] {
    const t = this.now();
    return [
      {
        name: "cycles_total",
        help: "Watch cycles by result: ok (planned, and applied with --apply), partial (rules held back by their own data, the others applied), failed, idle (a poll found nothing to do).",
        type: "counter",
        samples: [...this.cycles].map(([result, value]) => ({ labels: { result }, value })),
      },
      {
        name: "polls_total",
        help: "Idle polls: one list request per workflow that has rules.",
        type: "counter",
        samples: [{ value: this.polls }],
      },
      {
        name: "changes_applied_total",
        help: "Changes applied, by rule and kind.",
        type: "counter",
        samples: [...this.applied.values()].map((e) => ({ labels: { rule: e.rule, kind: e.kind }, value: e.n })),
      },
      {
        name: "changes_stale_total",
        help: "Planned changes refused at apply time because their instance changed since the plan.",
        type: "counter",
        samples: [{ value: this.stale }],
      },
      {
        name: "changes_failed_total",
        help: "Changes that failed or could not be decided.",
        type: "counter",
        samples: [{ value: this.failedChanges }],
      },
      {
        name: "requests_total",
        help: "HTTP exchanges with the service, by status (none: no answer).",
        type: "counter",
        samples: [...this.requests].sort().map(([status, value]) => ({ labels: { status }, value })),
      },
      {
        name: "rate_limit_waits_total",
        help: "Times requests were held back by the rate limit (ours or the service's 429).",
        type: "counter",
        samples: [{ value: this.rateLimitWaits }],
      },
      {
        name: "rules_loaded",
        help: "Rules the watcher runs (as loaded at the start or by the last reload that validated).",
        type: "gauge",
        samples: [{ value: this.rules.loaded }],
      },
      {
        name: "rules_held",
        help: "Rules held back by their own data in the last cycle (over max_instances, a failing expression): 1 per rule.",
        type: "gauge",
        samples: [...this.held.keys()].sort().map((rule) => ({ labels: { rule }, value: 1 })),
      },
      {
        name: "rules_info",
        help: "The digest of the rules the watcher runs, as a label (value 1).",
        type: "gauge",
        samples: [{ labels: { digest: this.rules.digest }, value: 1 }],
      },
      {
        name: "rules_reloads_total",
        help: "Reloads of the rules and the config file that validated (SIGHUP or a change on disk).",
        type: "counter",
        samples: [{ value: this.reloads }],
      },
      {
        name: "rules_reload_failures_total",
        help: "Reloads that did not validate: the rules loaded before stayed in effect.",
        type: "counter",
        samples: [{ value: this.reloadFailures }],
      },
      {
        name: "state_sync_instances",
        help: "A first sync of the state going on: instances synced so far (0 when none is going on).",
        type: "gauge",
        samples: [{ value: this.sync?.synced ?? 0 }],
      },
      {
        name: "state_sync_total_instances",
        help: "A first sync of the state going on: about how many instances it reads (0 when none is going on).",
        type: "gauge",
        samples: [{ value: this.sync?.total ?? 0 }],
      },
      {
        name: "state_sync_seconds_left",
        help: "A first sync of the state going on: about how long the rest takes at the key's rate (0 when none is going on or unknown).",
        type: "gauge",
        samples: [{ value: this.sync?.leftS ?? 0 }],
      },
      {
        name: "seconds_since_last_good_cycle",
        help: "Seconds since the last cycle that succeeded (since the start before any).",
        type: "gauge",
        samples: [{ value: Math.max(0, Math.round((t - (this.lastGoodAt ?? this.startedAt)) / 100) / 10) }],
      },
    ];
  }
}
