/** What happened to each planned change in one apply run. */
import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import type { PlannedChange } from "../plan/types.js";

export type OutcomeStatus =
  /** took effect in this run (answered, returned by its batch, or confirmed by reading after an unknown outcome) */
  | "applied"
  /** the journal shows an earlier run of this plan applied it: skipped */
  | "already_done"
  /** no longer holds (instance changed since the plan, step not active, not running): skipped */
  | "stale"
  /** refused by the service, or could not be sent or decided */
  | "failed"
  /** a change of a batch kind whose id its batch did not return (an abort: "not aborted") */
  | "not_acted"
  /** never attempted: the run halted first (the API key refused, a staleness check failed) */
  | "not_started"
  /** not started because --max-duration ran out or the run was stopped (SIGTERM, SIGINT): the same apply again resumes it */
  | "deferred";

export type AppliedHow = "response" | "returned" | "verified";

export interface ChangeOutcome {
  change: PlannedChange;
  status: OutcomeStatus;
  /** why (stale, failed, not_acted, not_started), or what confirmed it (applied by reading) */
  reason?: string;
  how?: AppliedHow;
}

export type Counts = Record<OutcomeStatus, number>;

export function countOutcomes(outcomes: ChangeOutcome[]): Counts {
  const counts: Counts = {
    applied: 0,
    already_done: 0,
    stale: 0,
    failed: 0,
    not_acted: 0,
    not_started: 0,
    deferred: 0,
  };
  for (const o of outcomes) counts[o.status] += 1;
  return counts;
}

/**
 * 1 when anything did not go as planned; with --detailed-exitcode 2 when changes were applied, else 0. Deferred
 * changes (the run reached --max-duration) are not a failure: a bounded run that applied what it could succeeds.
 */
export function applyExitCode(outcomes: ChangeOutcome[], detailed: boolean): number {
  const c = countOutcomes(outcomes);
  if (c.stale + c.failed + c.not_acted + c.not_started > 0) return EXIT_ERROR;
  return detailed && c.applied > 0 ? EXIT_CHANGES : EXIT_OK;
}
