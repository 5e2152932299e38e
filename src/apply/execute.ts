/**
 * Executes a checked plan, exactly once per change, journalling every step:
 *
 * 1. changes the journal shows done are skipped;
 * 2. staleness (see staleness.ts, recheck.ts): one list per workflow, then reads of the listed instances only — and of those
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
 * The engine prints nothing: it reports progress and staleness checks as data (onProgress, onCheck). The run's
 * bookkeeping is ./ledger.ts, the staleness checks ./recheck.ts, the senders ./send-each.ts and ./send-batches.ts.
 */
import { StoppedNotSentError, type ApiClient } from "../api/index.js";
import type { Journal } from "./journal.js";
import type { ChangeOutcome } from "./outcome.js";
import type { StalenessCheck } from "./types.js";
import type { PlannedChange, PlanFile } from "../plan/types.js";
import { Ledger, pushTo, senderOf, type ExecuteOptions } from "./ledger.js";
import { Staleness } from "./recheck.js";
import { SendEach } from "./send-each.js";
import { SendBatches } from "./send-batches.js";

export type { ExecuteOptions } from "./ledger.js";

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

async function run(l: Ledger): Promise<ExecuteResult> {
  const staleness = new Staleness(l);
  const pending = l.skipDone();
  l.report();
  try {
    if (pending.length > 0) {
      const ready = await staleness.judge(pending);
      for (const c of ready) if (!l.outcomes.has(c.id)) l.unsent.set(c.id, c);
      l.phase = "sending";
      l.report();
      await new SendEach(l, staleness).sendEach(ready.filter((c) => senderOf(c).mode === "each"));
      // batch kinds one after another, each in its own batches
      const batched = new Map<string, PlannedChange[]>();
      for (const c of ready) if (senderOf(c).mode === "batch") pushTo(batched, c.kind, c);
      const sender = new SendBatches(l, staleness);
      for (const list of batched.values()) await sender.sendBatches(list);
    }
  } catch (err) {
    // stopped while checking (a listing or a read refused to start): what is not settled is deferred below
    if (!(err instanceof StoppedNotSentError)) throw err;
  }
  const outcomes = l.plan.changes.map(
    (c) =>
      l.outcomes.get(c.id) ??
      (l.opts.signal?.aborted
        ? l.stoppedOutcome(c)
        : { change: c, status: "not_started" as const, reason: "not attempted" }),
  );
  return { outcomes, listedAsChanged: l.listed, readToCheck: l.reads, checks: l.checks };
}

export function executePlan(
  client: ApiClient,
  plan: PlanFile,
  journal: Journal,
  opts: ExecuteOptions,
): Promise<ExecuteResult> {
  return run(new Ledger(client, plan, journal, opts));
}
