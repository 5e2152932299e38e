/**
 * Kinds sent in batches (./execute.ts, step 4): batches of `batchSize`, the ids returned checked against the ids
 * sent; an id not returned is `not_acted`, read to say why. A batch whose outcome is unknown is decided by the kind's
 * listing of what took effect since, one list per workflow.
 */
import { mutatingKind, type BatchSender } from "../actions/index.js";
import { ApiError, OutcomeUnknownError, ResponseShapeError, TransportError } from "../api/index.js";
import { PastDeadlineNotSentError, StoppedNotSentError } from "../api/index.js";
import { sleep } from "../api/retry.js";
import { batches } from "./batches.js";
import type { PlannedChange } from "../plan/types.js";
import { batchSender, message, notVisible, pool, type Ledger } from "./ledger.js";
import type { Staleness } from "./recheck.js";

export class SendBatches {
  constructor(
    private readonly l: Ledger,
    private readonly staleness: Staleness,
  ) {}

  /** Changes of one batch kind. */
  async sendBatches(changes: PlannedChange[]): Promise<void> {
    const first = changes[0];
    if (first === undefined) return;
    const all = batches(changes, this.l.opts.batchSize);
    this.l.say(
      `${mutatingKind(first.kind).describe(first).label}: ${changes.length} instance${changes.length === 1 ? "" : "s"} in ${all.length} batch${all.length === 1 ? "" : "es"} of at most ${this.l.opts.batchSize}`,
    );
    await pool(
      all.map((batch, i) => ({ batch, n: i + 1 })),
      this.l.opts.concurrency,
      async ({ batch, n }) => {
        const open: PlannedChange[] = [];
        for (const c of batch) if (await this.staleness.mayStart(c)) open.push(c);
        if (open.length === 0) return;
        await this.l.inFlightFor(
          open.map((c) => c.instance_id),
          () => this.sendBatch(open, n),
        );
      },
    );
  }

  private async sendBatch(batch: PlannedChange[], n: number): Promise<void> {
    const sender = batchSender(batch[0]?.kind ?? "");
    let remaining = batch.filter((c) => !this.l.stopped(c));
    let lastUnknown = "";
    for (let attempt = 1; attempt <= this.l.opts.maxSendAttempts && remaining.length > 0; attempt++) {
      if (attempt > 1) remaining = remaining.filter((c) => !this.l.stopped(c));
      if (remaining.length === 0) return;
      this.l.journal.appendAll(remaining.map((c) => ({ event: "intent" as const, change: c.id, attempt, batch: n })));
      const sentAt = this.l.now();
      try {
        const returned = new Set(
          await sender.send(
            this.l.client,
            remaining.map((c) => c.instance_id),
          ),
        );
        const missing: PlannedChange[] = [];
        for (const c of remaining) {
          if (returned.has(c.instance_id)) this.l.done(c, "returned", undefined);
          else missing.push(c);
        }
        await this.explainNotReturned(missing, sender);
        return;
      } catch (err) {
        if (err instanceof PastDeadlineNotSentError) {
          for (const c of remaining) this.l.deferredByDeadline(c);
          return;
        }
        if (err instanceof StoppedNotSentError) {
          for (const c of remaining) this.l.stopped(c);
          return;
        }
        if (err instanceof OutcomeUnknownError || err instanceof ResponseShapeError) {
          lastUnknown =
            err instanceof OutcomeUnknownError ? err.reason : `answered ${err.status} with an unexpected body`;
          const left = await this.decideBatch(remaining, sentAt, lastUnknown, sender);
          if (left === undefined) return;
          remaining = left;
          continue;
        }
        if (err instanceof ApiError && err.status === 401)
          this.l.halted = `the service refused the API key (${message(err)})`;
        const sent = err instanceof TransportError ? " (not sent)" : "";
        for (const c of remaining) this.l.failed(c, `${sender.words.request} batch ${n}: ${message(err)}${sent}`);
        return;
      }
    }
    for (const c of remaining) {
      this.l.failed(
        c,
        `${sender.words.request} outcome unknown ${this.l.opts.maxSendAttempts} times (last: ${lastUnknown}); the instance was ${sender.words.notDone} as of the last check`,
      );
    }
  }

  /**
   * After a batch of unknown outcome: the kind's listing of the instances it took effect on since the request (one
   * list per workflow) decides the whole batch. Returns the changes still to send, or undefined when it is settled.
   */
  private async decideBatch(
    remaining: PlannedChange[],
    sentAt: number,
    reason: string,
    sender: BatchSender,
  ): Promise<PlannedChange[] | undefined> {
    await sleep(this.l.opts.verifyDelayMs);
    const { request, done } = sender.words;
    let took: Set<number>;
    try {
      took = await sender.tookEffectSince(
        this.l.client,
        remaining.map((c) => c.process_id),
        new Date(sentAt - this.l.opts.clockSkewMs),
      );
    } catch (err) {
      // stopping: the intents stay open in the journal, and the next run decides them by listing
      if (err instanceof StoppedNotSentError) for (const c of remaining) this.l.record(this.l.stoppedOutcome(c));
      else
        for (const c of remaining)
          this.l.failed(c, `${request} outcome unknown (${reason}) and it could not be checked: ${message(err)}`, true);
      return undefined;
    }
    const left: PlannedChange[] = [];
    for (const c of remaining) {
      if (took.has(c.instance_id))
        this.l.done(c, "verified", undefined, `${request} outcome unknown (${reason}); listed as ${done} since`);
      else left.push(c);
    }
    return left;
  }

  /** Ids the batch did not return: read each to say why. */
  private async explainNotReturned(missing: PlannedChange[], sender: BatchSender): Promise<void> {
    const records = await this.l.readAll(missing.map((c) => c.instance_id));
    for (const c of missing) {
      const r = records.get(c.instance_id);
      let why: string;
      if (r instanceof StoppedNotSentError) {
        // stopping before it could be read: left open (its intent), the next run decides it
        this.l.record(this.l.stoppedOutcome(c));
        continue;
      }
      if (r === undefined) why = `not returned by the ${sender.words.request}`;
      else if (r instanceof Error)
        why = notVisible(r)
          ? `not found or not visible to this API key (${message(r)})`
          : `not returned, and it could not be read: ${message(r)}`;
      else why = sender.whyNot(r);
      this.l.notActed(c, why);
    }
  }
}
