/**
 * What one apply knows as it runs (./execute.ts): each change's outcome as it settles — journalled, counted, streamed
 * to the caller — the changes still to send, the instances with a request in flight, and whether the run must stop
 * (a signal, a refused key, the deadline). The staleness checks (./recheck.ts) and the two senders (./send-each.ts,
 * ./send-batches.ts) work through it; nothing here sends a change.
 */
import { mutatingKind, type BatchSender, type EachSender } from "../actions/index.js";
import { ApiError, OutcomeUnknownError, TransportError, type ApiClient, type InstanceRecord } from "../api/index.js";
import { readForCheck } from "./instance-state.js";
import type { Journal } from "./journal.js";
import type { AppliedHow, ChangeOutcome } from "./outcome.js";
import type { ApplyProgress, StalenessCheck } from "./types.js";
import type { PlannedChange, PlanFile } from "../plan/types.js";
import { errorMessage } from "../model/guards.js";

export interface ExecuteOptions {
  batchSize: number;
  clockSkewMs: number;
  /** sends of one change in one run, at most (a repeat happens only after a read showed no effect) */
  maxSendAttempts: number;
  /** pause before reading after an unknown outcome, so a request still in the server's hands can land first */
  verifyDelayMs: number;
  concurrency: number;
  signal?: AbortSignal;
  /** staleness is judged again at least this often during the run (default 60 s) */
  recheckEveryMs?: number;
  /** epoch ms after which no change starts (the rest are deferred) */
  deadline?: number;
  /** progress lines (stderr) */
  progress?: (line: string) => void;
  /** called once per change as its outcome is known (for streamed log events) */
  onOutcome?: (outcome: ChangeOutcome) => void;
  /** called as changes settle and checks run; cheap to call often (views throttle) */
  onProgress?: (p: ApplyProgress) => void;
  /** called after each staleness check */
  onCheck?: (check: StalenessCheck) => void;
  now?: () => number;
}

export class Ledger {
  readonly outcomes = new Map<string, ChangeOutcome>();

  /** intents of earlier runs shown (by a list) not to have taken effect */
  readonly resolvedNotApplied = new Set<string>();

  /** set when going on is pointless (the key was refused) */
  halted: string | undefined;

  listed = 0;

  reads = 0;

  readonly checks: StalenessCheck[] = [];

  /** changes this run may still send, by id (removed as they settle) */
  readonly unsent = new Map<string, PlannedChange>();

  /** instances with a request in flight: judged at the next check instead (their own change is landing) */
  readonly inFlight = new Map<number, number>();

  readonly now: () => number;

  readonly startedAt: number;

  phase: ApplyProgress["phase"] = "checking";

  readonly tally = { applied: 0, stale: 0, failed: 0, deferred: 0, alreadyDone: 0, thisRun: 0 };

  constructor(
    readonly client: ApiClient,
    readonly plan: PlanFile,
    readonly journal: Journal,
    readonly opts: ExecuteOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
  }

  skipDone(): PlannedChange[] {
    const pending: PlannedChange[] = [];
    for (const c of this.plan.changes) {
      const h = this.journal.historyOf(c.id);
      if (h.done)
        this.record({
          change: c,
          status: "already_done",
          how: h.done.how,
          reason: `applied by an earlier run at ${h.done.at}`,
        });
      else if (h.notActed !== undefined)
        this.record({ change: c, status: "not_acted", reason: `${h.notActed} (earlier run)` });
      else pending.push(c);
    }
    return pending;
  }

  unresolved(c: PlannedChange): boolean {
    return this.journal.historyOf(c.id).unresolvedIntent && !this.resolvedNotApplied.has(c.id);
  }

  baseline(c: PlannedChange): string | undefined {
    return this.journal.baselineOf(c.instance_id) ?? c.precondition.last_updated_time;
  }

  async inFlightFor<T>(ids: number[], body: () => Promise<T>): Promise<T> {
    for (const id of ids) this.inFlight.set(id, (this.inFlight.get(id) ?? 0) + 1);
    try {
      return await body();
    } finally {
      for (const id of ids) {
        const n = (this.inFlight.get(id) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(id);
        else this.inFlight.set(id, n);
      }
    }
  }

  async readAll(ids: number[]): Promise<Map<number, InstanceRecord | Error>> {
    const out = new Map<number, InstanceRecord | Error>();
    await pool(ids, this.opts.concurrency, async (id) => {
      try {
        out.set(id, await readForCheck(this.client, id));
      } catch (err) {
        out.set(id, err instanceof Error ? err : new Error(String(err)));
      }
    });
    return out;
  }

  /** True (and the change marked not started, or deferred) when the run was interrupted, halted or out of time. */
  stopped(c: PlannedChange): boolean {
    if (this.opts.signal?.aborted) {
      if (!this.outcomes.has(c.id)) this.record(this.stoppedOutcome(c));
      return true;
    }
    if (this.halted !== undefined) {
      if (!this.outcomes.has(c.id))
        this.record({ change: c, status: "not_started", reason: `not sent: ${this.halted}` });
      return true;
    }
    if (this.opts.deadline !== undefined && this.now() >= this.opts.deadline) {
      if (!this.outcomes.has(c.id))
        this.record({
          change: c,
          status: "deferred",
          reason: "the run reached its maximum duration before this change started; the same apply again resumes it",
        });
      return true;
    }
    return false;
  }

  /**
   * Not started because the run was stopped (SIGTERM, SIGINT): deferred, as at --max-duration (docs/operating.md, "Applying safely") —
   * a stopped run is not a failed one, and the same apply again resumes it from the journal.
   */
  stoppedOutcome(c: PlannedChange): ChangeOutcome {
    return {
      change: c,
      status: "deferred",
      reason: "the run was stopped before this change was sent; the same apply again resumes it",
    };
  }

  /**
   * Not sent: its rate-limit slot would open only after the deadline (the client refused at once rather than wait
   * past --max-duration). Its intent line stays unresolved, so the next apply reads the instance before sending.
   */
  deferredByDeadline(c: PlannedChange): void {
    if (!this.outcomes.has(c.id))
      this.record({
        change: c,
        status: "deferred",
        reason:
          "the run would have reached its maximum duration waiting for the rate limit; the same apply again resumes it",
      });
  }

  done(c: PlannedChange, how: AppliedHow, lastUpdated: string | null | undefined, detail?: string): void {
    this.journal.append({
      event: "done",
      change: c.id,
      how,
      ...(lastUpdated ? { last_updated_time: lastUpdated } : {}),
    });
    this.record({ change: c, status: "applied", how, ...(detail ? { reason: detail } : {}) });
  }

  stale(c: PlannedChange, reason: string): void {
    this.journal.append({ event: "stale", change: c.id, reason });
    this.record({ change: c, status: "stale", reason });
  }

  failed(c: PlannedChange, reason: string, outcomeUnknown = false): void {
    this.journal.append({
      event: "failed",
      change: c.id,
      reason,
      ...(outcomeUnknown ? { outcome_unknown: true } : {}),
    });
    this.record({ change: c, status: "failed", reason });
  }

  /** A batch did not return its id (terminal: the record read says why, e.g. it is no longer running). */
  notActed(c: PlannedChange, reason: string): void {
    this.journal.append({ event: "not_acted", change: c.id, reason });
    this.record({ change: c, status: "not_acted", reason });
  }

  /** Every outcome goes through here, so callers can stream it (log events) as it happens. */
  record(o: ChangeOutcome): void {
    this.outcomes.set(o.change.id, o);
    this.unsent.delete(o.change.id);
    const t = this.tally;
    if (o.status === "already_done") t.alreadyDone += 1;
    else {
      t.thisRun += 1;
      if (o.status === "applied") t.applied += 1;
      else if (o.status === "stale") t.stale += 1;
      else if (o.status === "deferred") t.deferred += 1;
      else t.failed += 1;
    }
    this.opts.onOutcome?.(o);
    this.report();
  }

  report(): void {
    if (!this.opts.onProgress) return;
    const t = this.tally;
    this.opts.onProgress({
      phase: this.phase,
      total: this.plan.changes.length,
      settled: this.outcomes.size,
      settledThisRun: t.thisRun,
      applied: t.applied,
      stale: t.stale,
      failed: t.failed,
      deferred: t.deferred,
      alreadyDone: t.alreadyDone,
      checks: this.checks.length,
      startedAt: this.startedAt,
    });
  }

  say(line: string): void {
    this.opts.progress?.(line);
  }
}

/** An error in the words of an outcome's reason. */
export function message(err: unknown): string {
  if (err instanceof ApiError) return `the service answered ${err.status}${err.detail ? `: ${err.detail}` : ""}`;
  if (err instanceof OutcomeUnknownError || err instanceof TransportError) return err.reason;
  return errorMessage(err);
}

/** The instance is gone, or this key no longer sees it. */
export function notVisible(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 404 || err.status === 403);
}

export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Runs `work` over `items` with at most `size` at once, pulling lazily (no promise per item up front). */
export async function pool<T>(items: Iterable<T>, size: number, work: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  const worker = async (): Promise<void> => {
    for (let next = it.next(); !next.done; next = it.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(1, size) }, worker));
}

export function senderOf(c: PlannedChange): EachSender | BatchSender {
  return mutatingKind(c.kind).send;
}

export function eachSender(kind: string): EachSender {
  const s = mutatingKind(kind).send;
  if (s.mode !== "each") throw new Error(`${kind} is sent in batches`);
  return s;
}

export function batchSender(kind: string): BatchSender {
  const s = mutatingKind(kind).send;
  if (s.mode !== "batch") throw new Error(`${kind} is sent one request each`);
  return s;
}
