/**
 * Executes a checked plan, exactly once per change, journalling every step:
 *
 * 1. changes the journal shows done are skipped;
 * 2. staleness (see staleness.ts): one list per workflow, then reads of the listed instances only — and of those
 *    whose journal shows an intent without an outcome (decided by reading: took effect → done, else judged and sent);
 *    and again during the run, at least every `recheckEveryMs` before a change starts: one list per workflow with
 *    changes left, of the instances updated since the previous check, and the unsent changes on those judged anew —
 *    so no change goes out more than about one interval (plus the requests already in flight) after its instance
 *    changed at the service;
 * 3. kinds sent one request each (complete/save): instances concurrently (at most `concurrency` in flight, so at most
 *    that many intents can be open when the process dies), the changes of one instance in plan order;
 * 4. kinds sent in batches (abort, say): batches of `batchSize`, the ids returned checked against the ids sent; an id
 *    not returned is `not_acted`, read to say why.
 *
 * How each kind is sent, how a record shows it took effect and how its batches are named in messages is the kind's
 * own (src/actions): nothing here names a kind.
 *
 * A request whose outcome is unknown is never repeated before a read shows it did not take effect; repeats are
 * bounded by `maxSendAttempts`. With a `deadline`, no change starts after it: the rest are `deferred`, and the same
 * plan applied again resumes them from the journal.
 *
 * The engine prints nothing: it reports progress and staleness checks as data (onProgress, onCheck).
 */
import { mutatingKind, type BatchSender, type EachSender } from "../actions/index.js";
import {
  PastDeadlineNotSentError,
  StoppedNotSentError,
  ApiError,
  OutcomeUnknownError,
  ResponseShapeError,
  TransportError,
  type ApiClient,
  type InstanceRecord,
} from "../api/index.js";
import { sleep } from "../api/retry.js";
import { batches } from "./batches.js";
import { readForCheck } from "./instance-state.js";
import type { Journal } from "./journal.js";
import type { AppliedHow, ChangeOutcome } from "./outcome.js";
import type { ApplyProgress, StalenessCheck } from "./types.js";
import type { PlannedChange, PlanFile } from "../plan/types.js";
import { changedSince, staleReason } from "./staleness.js";
import { effectOf } from "./verify.js";
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

import { DEFAULT_RECHECK_EVERY_MS } from "../model/settings.js";

export interface ExecuteResult {
  /** one per planned change, in plan order */
  outcomes: ChangeOutcome[];
  /** instances of the plan's workflows listed as changed since the plan */
  listedAsChanged: number;
  /** instances read to judge staleness or decide an earlier intent */
  readToCheck: number;
  /** every staleness check of the run, the first (before any change) included */
  checks: StalenessCheck[];
}

function message(err: unknown): string {
  if (err instanceof ApiError) return `the service answered ${err.status}${err.detail ? `: ${err.detail}` : ""}`;
  if (err instanceof OutcomeUnknownError || err instanceof TransportError) return err.reason;
  return errorMessage(err);
}

function notVisible(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 404 || err.status === 403);
}

class Execution {
  private readonly outcomes = new Map<string, ChangeOutcome>();
  /** intents of earlier runs shown (by a list) not to have taken effect */
  private readonly resolvedNotApplied = new Set<string>();
  /** set when going on is pointless (the key was refused) */
  private halted: string | undefined;
  private listed = 0;
  private reads = 0;
  private readonly checks: StalenessCheck[] = [];
  /** local time the latest check started: the next one lists from there (minus the clock-skew margin) */
  private lastCheckAt = 0;
  private checking: Promise<void> | undefined;
  /** changes this run may still send, by id (removed as they settle) */
  private readonly unsent = new Map<string, PlannedChange>();
  /** instances with a request in flight: judged at the next check instead (their own change is landing) */
  private readonly inFlight = new Map<number, number>();
  private carriedOver = new Set<number>();
  private readonly now: () => number;
  private readonly startedAt: number;
  private phase: ApplyProgress["phase"] = "checking";
  private readonly tally = { applied: 0, stale: 0, failed: 0, deferred: 0, alreadyDone: 0, thisRun: 0 };

  constructor(
    private readonly client: ApiClient,
    private readonly plan: PlanFile,
    private readonly journal: Journal,
    private readonly opts: ExecuteOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
  }

  async run(): Promise<ExecuteResult> {
    const pending = this.skipDone();
    this.report();
    try {
      if (pending.length > 0) {
        const ready = await this.judge(pending);
        for (const c of ready) if (!this.outcomes.has(c.id)) this.unsent.set(c.id, c);
        this.phase = "sending";
        this.report();
        await this.sendEach(ready.filter((c) => senderOf(c).mode === "each"));
        // batch kinds one after another, each in its own batches
        const batched = new Map<string, PlannedChange[]>();
        for (const c of ready) if (senderOf(c).mode === "batch") pushTo(batched, c.kind, c);
        for (const list of batched.values()) await this.sendBatches(list);
      }
    } catch (err) {
      // stopped while checking (a listing or a read refused to start): what is not settled is deferred below
      if (!(err instanceof StoppedNotSentError)) throw err;
    }
    const outcomes = this.plan.changes.map(
      (c) => this.outcomes.get(c.id) ?? (this.opts.signal?.aborted ? this.stoppedOutcome(c) : { change: c, status: "not_started" as const, reason: "not attempted" }),
    );
    return { outcomes, listedAsChanged: this.listed, readToCheck: this.reads, checks: this.checks };
  }

  // ---- 1. the journal ----------------------------------------------------------------------------------------

  private skipDone(): PlannedChange[] {
    const pending: PlannedChange[] = [];
    for (const c of this.plan.changes) {
      const h = this.journal.historyOf(c.id);
      if (h.done) this.record({ change: c, status: "already_done", how: h.done.how, reason: `applied by an earlier run at ${h.done.at}` });
      else if (h.notActed !== undefined) this.record({ change: c, status: "not_acted", reason: `${h.notActed} (earlier run)` });
      else pending.push(c);
    }
    return pending;
  }

  private unresolved(c: PlannedChange): boolean {
    return this.journal.historyOf(c.id).unresolvedIntent && !this.resolvedNotApplied.has(c.id);
  }

  private baseline(c: PlannedChange): string | undefined {
    return this.journal.baselineOf(c.instance_id) ?? c.precondition.last_updated_time;
  }

  // ---- 2. staleness and earlier intents --------------------------------------------------------------------------

  private async judge(pending: PlannedChange[]): Promise<PlannedChange[]> {
    const { clockSkewMs } = this.opts;
    await this.resolveEarlierBatches(pending);
    const open = pending.filter((c) => !this.outcomes.has(c.id));
    if (open.length === 0) return [];

    const since = new Date(Date.parse(this.plan.created_at) - clockSkewMs);
    const workflows = new Set(open.map((c) => c.process_id));
    this.say(`checking ${open.length} change${open.length === 1 ? "" : "s"} for staleness: instances of ${workflows.size} workflow${workflows.size === 1 ? "" : "s"} updated since ${since.toISOString()}`);
    const checkStarted = this.now();
    const changed = await changedSince(this.client, workflows, since);
    this.listed = changed.size;

    const toRead = [...new Set(open.filter((c) => changed.has(c.instance_id) || this.unresolved(c)).map((c) => c.instance_id))];
    const records = await this.readAll(toRead);
    this.reads = toRead.length;
    let staleBefore = this.tally.stale;

    const ready: PlannedChange[] = [];
    for (const c of open) {
      const r = records.get(c.instance_id);
      if (r === undefined) {
        ready.push(c); // not changed since the plan: its precondition still holds
        continue;
      }
      const unresolved = this.unresolved(c);
      if (r instanceof StoppedNotSentError) continue; // deferred: the run is stopping
      if (r instanceof Error) {
        if (unresolved) this.failed(c, `an earlier run may have sent it, and the instance could not be read to decide: ${message(r)}`, true);
        else if (notVisible(r)) this.stale(c, `the instance is no longer found or visible (${message(r)})`);
        else this.failed(c, `could not read the instance to check it: ${message(r)}`);
        continue;
      }
      if (unresolved) {
        const effect = effectOf(c, r);
        if (effect.applied) {
          this.done(c, "verified", r.last_updated_time, `an earlier run's request took effect: ${effect.detail}`);
          continue;
        }
      }
      const why = staleReason(c, r, { baseline: this.baseline(c), listedAsChanged: changed.has(c.instance_id), seenBefore: c.precondition.last_updated_before });
      if (why) this.stale(c, why);
      else ready.push(c);
    }
    staleBefore = this.tally.stale - staleBefore;
    this.noteCheck(checkStarted, since, workflows.size, changed.size, toRead.length, staleBefore);
    return ready;
  }

  private noteCheck(started: number, since: Date, workflows: number, listed: number, read: number, stale: number): void {
    this.lastCheckAt = started;
    const check: StalenessCheck = { at: new Date(started).toISOString(), since: since.toISOString(), workflows, listed, read, stale };
    this.checks.push(check);
    this.journal.append({ event: "check", since: check.since, started_at: check.at, workflows, listed, read, stale });
    this.opts.onCheck?.(check);
    this.report();
  }

  // ---- 2b. staleness again, during the run -----------------------------------------------------------------------

  /**
   * Before a change starts: settled (stale, deferred, …) → false; otherwise, once the interval is up, one check runs
   * (the callers that arrive meanwhile wait for the same one) and the change is looked at again.
   */
  private async mayStart(c: PlannedChange): Promise<boolean> {
    if (this.outcomes.has(c.id) || this.stopped(c)) return false;
    const every = this.opts.recheckEveryMs ?? DEFAULT_RECHECK_EVERY_MS;
    if (this.now() - this.lastCheckAt >= every || this.checking) {
      this.checking ??= this.recheck().finally(() => {
        this.checking = undefined;
      });
      await this.checking;
    }
    return !this.outcomes.has(c.id) && !this.stopped(c);
  }

  private async recheck(): Promise<void> {
    const started = this.now();
    const since = new Date(this.lastCheckAt - this.opts.clockSkewMs);
    const left = [...this.unsent.values()].filter((c) => !this.outcomes.has(c.id));
    const workflows = new Set(left.map((c) => c.process_id));
    if (workflows.size === 0) {
      this.lastCheckAt = started;
      return;
    }
    this.phase = "checking";
    this.report();
    let changed: Set<number>;
    try {
      changed = await changedSince(this.client, workflows, since);
    } catch (err) {
      // without the list nothing tells which instances changed meanwhile: stop rather than send blindly
      this.halted = `the staleness check failed: ${message(err)}`;
      this.phase = "sending";
      return;
    }
    this.listed += changed.size;
    // instances with a request in flight are judged next time, when their own change has landed; changes settled
    // while the list was on its way (ours, landing) need no read
    const carried = this.carriedOver;
    this.carriedOver = new Set();
    const judged = new Set<number>();
    const stillLeft = [...this.unsent.values()];
    for (const c of stillLeft) {
      if (!changed.has(c.instance_id) && !carried.has(c.instance_id)) continue;
      if (this.inFlight.has(c.instance_id)) this.carriedOver.add(c.instance_id);
      else judged.add(c.instance_id);
    }
    const records = await this.readAll([...judged]);
    this.reads += judged.size;
    let stale = 0;
    for (const c of stillLeft) {
      if (!judged.has(c.instance_id) || this.outcomes.has(c.id)) continue;
      const r = records.get(c.instance_id);
      if (r === undefined || r instanceof StoppedNotSentError) continue;
      if (r instanceof Error) {
        if (notVisible(r)) {
          this.stale(c, `the instance is no longer found or visible (${message(r)})`);
          stale += 1;
        } else this.failed(c, `could not read the instance to check it: ${message(r)}`);
        continue;
      }
      const why = staleReason(c, r, { baseline: this.baseline(c), listedAsChanged: true, seenBefore: c.precondition.last_updated_before });
      if (why) {
        this.stale(c, `${why} (found by the check at ${new Date(started).toISOString()})`);
        stale += 1;
      }
    }
    this.phase = "sending";
    this.noteCheck(started, since, workflows.size, changed.size, judged.size, stale);
  }

  private async inFlightFor<T>(ids: number[], body: () => Promise<T>): Promise<T> {
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

  /** Batched changes an earlier run may have sent: one listing per kind and workflow decides them all. */
  private async resolveEarlierBatches(pending: PlannedChange[]): Promise<void> {
    const byKind = new Map<string, PlannedChange[]>();
    for (const c of pending) if (senderOf(c).mode === "batch" && this.unresolved(c)) pushTo(byKind, c.kind, c);
    for (const [kind, open] of byKind) {
      const times = open.map((c) => Date.parse(this.journal.historyOf(c.id).lastIntentAt ?? this.plan.created_at));
      const since = new Date(Math.min(...times) - this.opts.clockSkewMs);
      const sender = batchSender(kind);
      const took = await sender.tookEffectSince(this.client, open.map((c) => c.process_id), since);
      for (const c of open) {
        if (took.has(c.instance_id)) this.done(c, "verified", undefined, `an earlier run's batch took effect (listed: ${mutatingKind(kind).describe(c).label} done since)`);
        else this.resolvedNotApplied.add(c.id);
      }
    }
  }

  private async readAll(ids: number[]): Promise<Map<number, InstanceRecord | Error>> {
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

  // ---- 3. kinds sent one request each ----------------------------------------------------------------------------

  private async sendEach(changes: PlannedChange[]): Promise<void> {
    if (changes.length === 0) return;
    const byInstance = new Map<number, PlannedChange[]>();
    for (const c of changes) {
      const group = byInstance.get(c.instance_id);
      if (group) group.push(c);
      else byInstance.set(c.instance_id, [c]);
    }
    await pool(byInstance.values(), this.opts.concurrency, async (group) => {
      for (const c of group) {
        if (!(await this.mayStart(c))) continue;
        await this.inFlightFor([c.instance_id], () => this.sendOne(c));
      }
    });
  }

  private async sendOne(c: PlannedChange): Promise<void> {
    const sender = eachSender(c.kind);
    let lastUnknown = "";
    for (let attempt = 1; attempt <= this.opts.maxSendAttempts; attempt++) {
      if (attempt > 1 && this.stopped(c)) return;
      this.journal.append({ event: "intent", change: c.id, attempt });
      try {
        const record = await sender.send(this.client, c);
        this.done(c, "response", record.last_updated_time);
        return;
      } catch (err) {
        if (err instanceof PastDeadlineNotSentError) {
          this.deferredByDeadline(c);
          return;
        }
        if (err instanceof StoppedNotSentError) {
          this.stopped(c);
          return;
        }
        if (err instanceof OutcomeUnknownError || err instanceof ResponseShapeError) {
          // a 2xx with a body that is not the instance record may come from a proxy or a captive portal, not from
          // the service: like a lost answer, it is decided by reading the instance, never assumed applied
          const reason = err instanceof OutcomeUnknownError ? err.reason : `answered ${err.status} with an unexpected body`;
          lastUnknown = reason;
          const decided = await this.decideOne(c, reason);
          if (decided) return;
          continue; // surely not applied, still holds: send again
        }
        await this.refused(c, err);
        return;
      }
    }
    this.failed(c, `outcome unknown ${this.opts.maxSendAttempts} times (last: ${lastUnknown}); reading showed no effect each time, so it was not applied`);
  }

  /** After an unknown outcome: read, and settle the change (true) or report it may be sent again (false). */
  private async decideOne(c: PlannedChange, reason: string): Promise<boolean> {
    await sleep(this.opts.verifyDelayMs);
    let record: InstanceRecord;
    try {
      record = await readForCheck(this.client, c.instance_id);
    } catch (err) {
      // stopping: its intent stays open in the journal, and the next run decides it by reading
      if (err instanceof StoppedNotSentError) this.record(this.stoppedOutcome(c));
      else this.failed(c, `outcome unknown (${reason}) and the instance could not be read to decide: ${message(err)}`, true);
      return true;
    }
    const effect = effectOf(c, record);
    if (effect.applied) {
      this.done(c, "verified", record.last_updated_time, `outcome unknown (${reason}); reading showed it took effect: ${effect.detail}`);
      return true;
    }
    const why = staleReason(c, record, { baseline: this.baseline(c), listedAsChanged: false });
    if (why) {
      this.stale(c, `outcome unknown (${reason}), not applied, and it no longer holds: ${why}`);
      return true;
    }
    return false;
  }

  /** The service refused (or the request never left): classify, reading the instance when it may have gone stale. */
  private async refused(c: PlannedChange, err: unknown): Promise<void> {
    if (err instanceof ApiError && err.status === 401) {
      this.halted = `the service refused the API key (${message(err)})`;
      this.failed(c, this.halted);
      return;
    }
    if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
      // most often the instance changed between our check and the request (step completed meanwhile)
      try {
        const record = await readForCheck(this.client, c.instance_id);
        const why = staleReason(c, record, { baseline: this.baseline(c), listedAsChanged: false });
        if (why) {
          this.stale(c, `${why} (the service refused: ${err.detail || err.status})`);
          return;
        }
      } catch {
        // fall through: report the refusal itself
      }
    }
    const sent = err instanceof TransportError ? " (not sent)" : "";
    this.failed(c, `${message(err)}${sent}`);
  }

  // ---- 4. kinds sent in batches ---------------------------------------------------------------------------------

  /** Changes of one batch kind. */
  private async sendBatches(changes: PlannedChange[]): Promise<void> {
    const first = changes[0];
    if (first === undefined) return;
    const all = batches(changes, this.opts.batchSize);
    this.say(`${mutatingKind(first.kind).describe(first).label}: ${changes.length} instance${changes.length === 1 ? "" : "s"} in ${all.length} batch${all.length === 1 ? "" : "es"} of at most ${this.opts.batchSize}`);
    await pool(all.map((batch, i) => ({ batch, n: i + 1 })), this.opts.concurrency, async ({ batch, n }) => {
      const open: PlannedChange[] = [];
      for (const c of batch) if (await this.mayStart(c)) open.push(c);
      if (open.length === 0) return;
      await this.inFlightFor(open.map((c) => c.instance_id), () => this.sendBatch(open, n));
    });
  }

  private async sendBatch(batch: PlannedChange[], n: number): Promise<void> {
    const sender = batchSender(batch[0]?.kind ?? "");
    let remaining = batch.filter((c) => !this.stopped(c));
    let lastUnknown = "";
    for (let attempt = 1; attempt <= this.opts.maxSendAttempts && remaining.length > 0; attempt++) {
      if (attempt > 1) remaining = remaining.filter((c) => !this.stopped(c));
      if (remaining.length === 0) return;
      this.journal.appendAll(remaining.map((c) => ({ event: "intent" as const, change: c.id, attempt, batch: n })));
      const sentAt = this.now();
      try {
        const returned = new Set(await sender.send(this.client, remaining.map((c) => c.instance_id)));
        const missing: PlannedChange[] = [];
        for (const c of remaining) {
          if (returned.has(c.instance_id)) this.done(c, "returned", undefined);
          else missing.push(c);
        }
        await this.explainNotReturned(missing, sender);
        return;
      } catch (err) {
        if (err instanceof PastDeadlineNotSentError) {
          for (const c of remaining) this.deferredByDeadline(c);
          return;
        }
        if (err instanceof StoppedNotSentError) {
          for (const c of remaining) this.stopped(c);
          return;
        }
        if (err instanceof OutcomeUnknownError || err instanceof ResponseShapeError) {
          lastUnknown = err instanceof OutcomeUnknownError ? err.reason : `answered ${err.status} with an unexpected body`;
          const left = await this.decideBatch(remaining, sentAt, lastUnknown, sender);
          if (left === undefined) return;
          remaining = left;
          continue;
        }
        if (err instanceof ApiError && err.status === 401) this.halted = `the service refused the API key (${message(err)})`;
        const sent = err instanceof TransportError ? " (not sent)" : "";
        for (const c of remaining) this.failed(c, `${sender.words.request} batch ${n}: ${message(err)}${sent}`);
        return;
      }
    }
    for (const c of remaining) {
      this.failed(c, `${sender.words.request} outcome unknown ${this.opts.maxSendAttempts} times (last: ${lastUnknown}); the instance was ${sender.words.notDone} as of the last check`);
    }
  }

  /**
   * After a batch of unknown outcome: the kind's listing of the instances it took effect on since the request (one
   * list per workflow) decides the whole batch. Returns the changes still to send, or undefined when it is settled.
   */
  private async decideBatch(remaining: PlannedChange[], sentAt: number, reason: string, sender: BatchSender): Promise<PlannedChange[] | undefined> {
    await sleep(this.opts.verifyDelayMs);
    const { request, done } = sender.words;
    let took: Set<number>;
    try {
      took = await sender.tookEffectSince(this.client, remaining.map((c) => c.process_id), new Date(sentAt - this.opts.clockSkewMs));
    } catch (err) {
      // stopping: the intents stay open in the journal, and the next run decides them by listing
      if (err instanceof StoppedNotSentError) for (const c of remaining) this.record(this.stoppedOutcome(c));
      else for (const c of remaining) this.failed(c, `${request} outcome unknown (${reason}) and it could not be checked: ${message(err)}`, true);
      return undefined;
    }
    const left: PlannedChange[] = [];
    for (const c of remaining) {
      if (took.has(c.instance_id)) this.done(c, "verified", undefined, `${request} outcome unknown (${reason}); listed as ${done} since`);
      else left.push(c);
    }
    return left;
  }

  /** Ids the batch did not return: read each to say why. */
  private async explainNotReturned(missing: PlannedChange[], sender: BatchSender): Promise<void> {
    const records = await this.readAll(missing.map((c) => c.instance_id));
    for (const c of missing) {
      const r = records.get(c.instance_id);
      let why: string;
      if (r instanceof StoppedNotSentError) {
        // stopping before it could be read: left open (its intent), the next run decides it
        this.record(this.stoppedOutcome(c));
        continue;
      }
      if (r === undefined) why = `not returned by the ${sender.words.request}`;
      else if (r instanceof Error) why = notVisible(r) ? `not found or not visible to this API key (${message(r)})` : `not returned, and it could not be read: ${message(r)}`;
      else why = sender.whyNot(r);
      this.notActed(c, why);
    }
  }

  // ---- bookkeeping -----------------------------------------------------------------------------------------------

  /** True (and the change marked not started, or deferred) when the run was interrupted, halted or out of time. */
  private stopped(c: PlannedChange): boolean {
    if (this.opts.signal?.aborted) {
      if (!this.outcomes.has(c.id)) this.record(this.stoppedOutcome(c));
      return true;
    }
    if (this.halted !== undefined) {
      if (!this.outcomes.has(c.id)) this.record({ change: c, status: "not_started", reason: `not sent: ${this.halted}` });
      return true;
    }
    if (this.opts.deadline !== undefined && this.now() >= this.opts.deadline) {
      if (!this.outcomes.has(c.id)) this.record({ change: c, status: "deferred", reason: "the run reached its maximum duration before this change started; the same apply again resumes it" });
      return true;
    }
    return false;
  }

  /**
   * Not started because the run was stopped (SIGTERM, SIGINT): deferred, as at --max-duration (docs/operating.md, "Applying safely") —
   * a stopped run is not a failed one, and the same apply again resumes it from the journal.
   */
  private stoppedOutcome(c: PlannedChange): ChangeOutcome {
    return { change: c, status: "deferred", reason: "the run was stopped before this change was sent; the same apply again resumes it" };
  }

  /**
   * Not sent: its rate-limit slot would open only after the deadline (the client refused at once rather than wait
   * past --max-duration). Its intent line stays unresolved, so the next apply reads the instance before sending.
   */
  private deferredByDeadline(c: PlannedChange): void {
    if (!this.outcomes.has(c.id)) this.record({ change: c, status: "deferred", reason: "the run would have reached its maximum duration waiting for the rate limit; the same apply again resumes it" });
  }

  private done(c: PlannedChange, how: AppliedHow, lastUpdated: string | null | undefined, detail?: string): void {
    this.journal.append({ event: "done", change: c.id, how, ...(lastUpdated ? { last_updated_time: lastUpdated } : {}) });
    this.record({ change: c, status: "applied", how, ...(detail ? { reason: detail } : {}) });
  }

  private stale(c: PlannedChange, reason: string): void {
    this.journal.append({ event: "stale", change: c.id, reason });
    this.record({ change: c, status: "stale", reason });
  }

  private failed(c: PlannedChange, reason: string, outcomeUnknown = false): void {
    this.journal.append({ event: "failed", change: c.id, reason, ...(outcomeUnknown ? { outcome_unknown: true } : {}) });
    this.record({ change: c, status: "failed", reason });
  }

  /** A batch did not return its id (terminal: the record read says why, e.g. it is no longer running). */
  private notActed(c: PlannedChange, reason: string): void {
    this.journal.append({ event: "not_acted", change: c.id, reason });
    this.record({ change: c, status: "not_acted", reason });
  }

  /** Every outcome goes through here, so callers can stream it (log events) as it happens. */
  private record(o: ChangeOutcome): void {
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

  private report(): void {
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

  private say(line: string): void {
    this.opts.progress?.(line);
  }
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Runs `work` over `items` with at most `size` at once, pulling lazily (no promise per item up front). */
async function pool<T>(items: Iterable<T>, size: number, work: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  const worker = async (): Promise<void> => {
    for (let next = it.next(); !next.done; next = it.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: Math.max(1, size) }, worker));
}

function senderOf(c: PlannedChange): EachSender | BatchSender {
  return mutatingKind(c.kind).send;
}

function eachSender(kind: string): EachSender {
  const s = mutatingKind(kind).send;
  if (s.mode !== "each") throw new Error(`${kind} is sent in batches`);
  return s;
}

function batchSender(kind: string): BatchSender {
  const s = mutatingKind(kind).send;
  if (s.mode !== "batch") throw new Error(`${kind} is sent one request each`);
  return s;
}

export function executePlan(client: ApiClient, plan: PlanFile, journal: Journal, opts: ExecuteOptions): Promise<ExecuteResult> {
  return new Execution(client, plan, journal, opts).run();
}
