/**
 * What an apply did, one event per planned change: `change.applied` (this run), `change.skipped` (done by an
 * earlier run, stale, never started) or `change.failed` (refused, undecidable, not acted on by its batch), `change.deferred` (not
 * started before --max-duration ran out; status `deferred`) — then `apply.finished`.
 */
import type { ChangeOutcome, OutcomeStatus } from "../../apply/outcome.js";
import type { Logger, LogLevel } from "../../log/types.js";

const EVENT: Record<OutcomeStatus, { name: string; level: LogLevel }> = {
  applied: { name: "change.applied", level: "info" },
  already_done: { name: "change.skipped", level: "info" },
  stale: { name: "change.skipped", level: "warn" },
  not_started: { name: "change.skipped", level: "warn" },
  failed: { name: "change.failed", level: "error" },
  not_acted: { name: "change.failed", level: "error" },
  deferred: { name: "change.deferred", level: "info" },
};

export function logOutcomes(log: Logger, outcomes: ChangeOutcome[]): void {
  for (const o of outcomes) {
    const { name, level } = EVENT[o.status];
    const c = o.change;
    log.event(
      name,
      {
        change_id: c.id,
        rule: c.rule,
        instance_id: c.instance_id,
        kind: c.kind,
        ...(c.step_id !== undefined ? { step_id: c.step_id } : {}),
        status: o.status,
        ...(o.how ? { how: o.how } : {}),
        ...(o.reason ? { reason: o.reason } : {}),
      },
      level,
    );
  }
}
