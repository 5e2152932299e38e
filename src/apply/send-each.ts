/**
 * Kinds sent one request each (./execute.ts, step 3): instances concurrently (at most `concurrency` in flight, so at
 * most that many intents can be open when the process dies), the changes of one instance in plan order. A request
 * whose outcome is unknown is decided by reading the instance, and sent again only when the read shows no effect.
 */
import {
  ApiError,
  OutcomeUnknownError,
  ResponseShapeError,
  TransportError,
  type InstanceRecord,
} from "../api/index.js";
import { PastDeadlineNotSentError, StoppedNotSentError } from "../api/index.js";
import { sleep } from "../api/retry.js";
import { readForCheck } from "./instance-state.js";
import type { PlannedChange } from "../plan/types.js";
import { staleReason } from "./staleness.js";
import { effectOf } from "./verify.js";
import { eachSender, message, pool, type Ledger } from "./ledger.js";
import type { Staleness } from "./recheck.js";

export class SendEach {
  constructor(
    private readonly l: Ledger,
    private readonly staleness: Staleness,
  ) {}

  async sendEach(changes: PlannedChange[]): Promise<void> {
    if (changes.length === 0) return;
    const byInstance = new Map<number, PlannedChange[]>();
    for (const c of changes) {
      const group = byInstance.get(c.instance_id);
      if (group) group.push(c);
      else byInstance.set(c.instance_id, [c]);
    }
    await pool(byInstance.values(), this.l.opts.concurrency, async (group) => {
      for (const c of group) {
        if (!(await this.staleness.mayStart(c))) continue;
        await this.l.inFlightFor([c.instance_id], () => this.sendOne(c));
      }
    });
  }

  private async sendOne(c: PlannedChange): Promise<void> {
    const sender = eachSender(c.kind);
    let lastUnknown = "";
    for (let attempt = 1; attempt <= this.l.opts.maxSendAttempts; attempt++) {
      if (attempt > 1 && this.l.stopped(c)) return;
      this.l.journal.append({ event: "intent", change: c.id, attempt });
      try {
        const record = await sender.send(this.l.client, c);
        this.l.done(c, "response", record.last_updated_time);
        return;
      } catch (err) {
        if (err instanceof PastDeadlineNotSentError) {
          this.l.deferredByDeadline(c);
          return;
        }
        if (err instanceof StoppedNotSentError) {
          this.l.stopped(c);
          return;
        }
        if (err instanceof OutcomeUnknownError || err instanceof ResponseShapeError) {
          // a 2xx with a body that is not the instance record may come from a proxy or a captive portal, not from
          // the service: like a lost answer, it is decided by reading the instance, never assumed applied
          const reason =
            err instanceof OutcomeUnknownError ? err.reason : `answered ${err.status} with an unexpected body`;
          lastUnknown = reason;
          const decided = await this.decideOne(c, reason);
          if (decided) return;
          continue; // surely not applied, still holds: send again
        }
        await this.refused(c, err);
        return;
      }
    }
    this.l.failed(
      c,
      `outcome unknown ${this.l.opts.maxSendAttempts} times (last: ${lastUnknown}); reading showed no effect each time, so it was not applied`,
    );
  }

  /** After an unknown outcome: read, and settle the change (true) or report it may be sent again (false). */
  private async decideOne(c: PlannedChange, reason: string): Promise<boolean> {
    await sleep(this.l.opts.verifyDelayMs);
    let record: InstanceRecord;
    try {
      record = await readForCheck(this.l.client, c.instance_id);
    } catch (err) {
      // stopping: its intent stays open in the journal, and the next run decides it by reading
      if (err instanceof StoppedNotSentError) this.l.record(this.l.stoppedOutcome(c));
      else
        this.l.failed(
          c,
          `outcome unknown (${reason}) and the instance could not be read to decide: ${message(err)}`,
          true,
        );
      return true;
    }
    const effect = effectOf(c, record);
    if (effect.applied) {
      this.l.done(
        c,
        "verified",
        record.last_updated_time,
        `outcome unknown (${reason}); reading showed it took effect: ${effect.detail}`,
      );
      return true;
    }
    const why = staleReason(c, record, { baseline: this.l.baseline(c), listedAsChanged: false });
    if (why) {
      this.l.stale(c, `outcome unknown (${reason}), not applied, and it no longer holds: ${why}`);
      return true;
    }
    return false;
  }

  /** The service refused (or the request never left): classify, reading the instance when it may have gone stale. */
  private async refused(c: PlannedChange, err: unknown): Promise<void> {
    if (err instanceof ApiError && err.status === 401) {
      this.l.halted = `the service refused the API key (${message(err)})`;
      this.l.failed(c, this.l.halted);
      return;
    }
    if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
      // most often the instance changed between our check and the request (step completed meanwhile)
      try {
        const record = await readForCheck(this.l.client, c.instance_id);
        const why = staleReason(c, record, { baseline: this.l.baseline(c), listedAsChanged: false });
        if (why) {
          this.l.stale(c, `${why} (the service refused: ${err.detail || err.status})`);
          return;
        }
      } catch {
        // fall through: report the refusal itself
      }
    }
    const sent = err instanceof TransportError ? " (not sent)" : "";
    this.l.failed(c, `${message(err)}${sent}`);
  }
}
