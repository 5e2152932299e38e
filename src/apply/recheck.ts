/**
 * Staleness during an apply (./execute.ts, step 2): before the first change, one list per workflow of the instances
 * updated since the plan, then reads of those only — and of those whose journal shows an intent without an outcome,
 * decided by reading; during the run, at least every `recheckEveryMs` before a change starts, one list per workflow
 * with changes left and the unsent changes on the instances it names judged anew. What "stale" means is
 * ./staleness.ts.
 */
import { mutatingKind } from "../actions/index.js";
import { StoppedNotSentError } from "../api/index.js";
import type { StalenessCheck } from "./types.js";
import type { PlannedChange } from "../plan/types.js";
import { changedSince, staleReason } from "./staleness.js";
import { effectOf } from "./verify.js";
import { timeOf } from "./instance-state.js";
import { DEFAULT_RECHECK_EVERY_MS } from "../model/settings.js";
import { batchSender, message, notVisible, pushTo, senderOf, type Ledger } from "./ledger.js";

/**
 * The instances of these changes when every one of them was planned against an update at or after `since` (plus a
 * millisecond: the service may keep microseconds): the list from `since` would name each of them whatever happened
 * since (an instance's time only moves on), so each is read and judged all the same, and the list is not asked (a
 * watcher applying what people just did: docs/performance.md, "A busy tenant"). Undefined when one was not.
 */
export function allListed(
  open: readonly PlannedChange[],
  baseline: (c: PlannedChange) => string | undefined,
  since: Date,
): Set<number> | undefined {
  for (const c of open) {
    const b = baseline(c);
    const t = b === undefined ? undefined : timeOf(b);
    if (t === undefined || !(t > since.getTime() + 1)) return undefined;
  }
  return new Set(open.map((c) => c.instance_id));
}

export class Staleness {
  /** local time the latest check started: the next one lists from there (minus the clock-skew margin) */
  private lastCheckAt = 0;
  private checking: Promise<void> | undefined;
  private carriedOver = new Set<number>();

  constructor(private readonly l: Ledger) {}

  async judge(pending: PlannedChange[]): Promise<PlannedChange[]> {
    const { clockSkewMs } = this.l.opts;
    await this.resolveEarlierBatches(pending);
    const open = pending.filter((c) => !this.l.outcomes.has(c.id));
    if (open.length === 0) return [];

    const since = new Date(Date.parse(this.l.plan.created_at) - clockSkewMs);
    const workflows = new Set(open.map((c) => c.process_id));
    this.l.say(
      `checking ${open.length} change${open.length === 1 ? "" : "s"} for staleness: instances of ${workflows.size} workflow${workflows.size === 1 ? "" : "s"} updated since ${since.toISOString()}`,
    );
    const checkStarted = this.l.now();
    const changed =
      allListed(open, (c) => this.l.baseline(c), since) ?? (await changedSince(this.l.client, workflows, since));
    this.l.listed = changed.size;

    const toRead = [
      ...new Set(open.filter((c) => changed.has(c.instance_id) || this.l.unresolved(c)).map((c) => c.instance_id)),
    ];
    const records = await this.l.readAll(toRead);
    this.l.reads = toRead.length;
    let staleBefore = this.l.tally.stale;

    const ready: PlannedChange[] = [];
    for (const c of open) {
      const r = records.get(c.instance_id);
      if (r === undefined) {
        ready.push(c); // not changed since the plan: its precondition still holds
        continue;
      }
      const unresolved = this.l.unresolved(c);
      if (r instanceof StoppedNotSentError) continue; // deferred: the run is stopping
      if (r instanceof Error) {
        if (unresolved)
          this.l.failed(
            c,
            `an earlier run may have sent it, and the instance could not be read to decide: ${message(r)}`,
            true,
          );
        else if (notVisible(r)) this.l.stale(c, `the instance is no longer found or visible (${message(r)})`);
        else this.l.failed(c, `could not read the instance to check it: ${message(r)}`);
        continue;
      }
      if (unresolved) {
        const effect = effectOf(c, r);
        if (effect.applied) {
          this.l.done(c, "verified", r.last_updated_time, `an earlier run's request took effect: ${effect.detail}`);
          continue;
        }
      }
      const why = staleReason(c, r, {
        baseline: this.l.baseline(c),
        listedAsChanged: changed.has(c.instance_id),
        seenBefore: c.precondition.last_updated_before,
      });
      if (why) this.l.stale(c, why);
      else ready.push(c);
    }
    staleBefore = this.l.tally.stale - staleBefore;
    this.noteCheck(checkStarted, since, workflows.size, changed.size, toRead.length, staleBefore);
    return ready;
  }

  private noteCheck(
    started: number,
    since: Date,
    workflows: number,
    listed: number,
    read: number,
    stale: number,
  ): void {
    this.lastCheckAt = started;
    const check: StalenessCheck = {
      at: new Date(started).toISOString(),
      since: since.toISOString(),
      workflows,
      listed,
      read,
      stale,
    };
    this.l.checks.push(check);
    this.l.journal.append({ event: "check", since: check.since, started_at: check.at, workflows, listed, read, stale });
    this.l.opts.onCheck?.(check);
    this.l.report();
  }

  /**
   * Before a change starts: settled (stale, deferred, …) → false; otherwise, once the interval is up, one check runs
   * (the callers that arrive meanwhile wait for the same one) and the change is looked at again.
   */
  async mayStart(c: PlannedChange): Promise<boolean> {
    if (this.l.outcomes.has(c.id) || this.l.stopped(c)) return false;
    const every = this.l.opts.recheckEveryMs ?? DEFAULT_RECHECK_EVERY_MS;
    if (this.l.now() - this.lastCheckAt >= every || this.checking) {
      this.checking ??= this.recheck().finally(() => {
        this.checking = undefined;
      });
      await this.checking;
    }
    return !this.l.outcomes.has(c.id) && !this.l.stopped(c);
  }

  private async recheck(): Promise<void> {
    const started = this.l.now();
    const since = new Date(this.lastCheckAt - this.l.opts.clockSkewMs);
    const left = [...this.l.unsent.values()].filter((c) => !this.l.outcomes.has(c.id));
    const workflows = new Set(left.map((c) => c.process_id));
    if (workflows.size === 0) {
      this.lastCheckAt = started;
      return;
    }
    this.l.phase = "checking";
    this.l.report();
    let changed: Set<number>;
    try {
      changed = await changedSince(this.l.client, workflows, since);
    } catch (err) {
      // without the list nothing tells which instances changed meanwhile: stop rather than send blindly
      this.l.halted = `the staleness check failed: ${message(err)}`;
      this.l.phase = "sending";
      return;
    }
    this.l.listed += changed.size;
    // instances with a request in flight are judged next time, when their own change has landed; changes settled
    // while the list was on its way (ours, landing) need no read
    const carried = this.carriedOver;
    this.carriedOver = new Set();
    const judged = new Set<number>();
    const stillLeft = [...this.l.unsent.values()];
    for (const c of stillLeft) {
      if (!changed.has(c.instance_id) && !carried.has(c.instance_id)) continue;
      if (this.l.inFlight.has(c.instance_id)) this.carriedOver.add(c.instance_id);
      else judged.add(c.instance_id);
    }
    const records = await this.l.readAll([...judged]);
    this.l.reads += judged.size;
    let stale = 0;
    for (const c of stillLeft) {
      if (!judged.has(c.instance_id) || this.l.outcomes.has(c.id)) continue;
      const r = records.get(c.instance_id);
      if (r === undefined || r instanceof StoppedNotSentError) continue;
      if (r instanceof Error) {
        if (notVisible(r)) {
          this.l.stale(c, `the instance is no longer found or visible (${message(r)})`);
          stale += 1;
        } else this.l.failed(c, `could not read the instance to check it: ${message(r)}`);
        continue;
      }
      const why = staleReason(c, r, {
        baseline: this.l.baseline(c),
        listedAsChanged: true,
        seenBefore: c.precondition.last_updated_before,
      });
      if (why) {
        this.l.stale(c, `${why} (found by the check at ${new Date(started).toISOString()})`);
        stale += 1;
      }
    }
    this.l.phase = "sending";
    this.noteCheck(started, since, workflows.size, changed.size, judged.size, stale);
  }

  /** Batched changes an earlier run may have sent: one listing per kind and workflow decides them all. */
  private async resolveEarlierBatches(pending: PlannedChange[]): Promise<void> {
    const byKind = new Map<string, PlannedChange[]>();
    for (const c of pending) if (senderOf(c).mode === "batch" && this.l.unresolved(c)) pushTo(byKind, c.kind, c);
    for (const [kind, open] of byKind) {
      const times = open.map((c) => Date.parse(this.l.journal.historyOf(c.id).lastIntentAt ?? this.l.plan.created_at));
      const since = new Date(Math.min(...times) - this.l.opts.clockSkewMs);
      const sender = batchSender(kind);
      const took = await sender.tookEffectSince(
        this.l.client,
        open.map((c) => c.process_id),
        since,
      );
      for (const c of open) {
        if (took.has(c.instance_id))
          this.l.done(
            c,
            "verified",
            undefined,
            `an earlier run's batch took effect (listed: ${mutatingKind(kind).describe(c).label} done since)`,
          );
        else this.l.resolvedNotApplied.add(c.id);
      }
    }
  }
}
