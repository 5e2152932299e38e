/** What happened to each planned change in one apply run. */
import type { ApplyChange } from "../../plan/read.js";

export type OutcomeStatus =
  /** took effect in this run (answered, returned by the bulk abort, or confirmed by reading after an unknown outcome) */
  | "applied"
  /** the journal shows an earlier run of this plan applied it: skipped */
  | "already_done"
  /** no longer holds (instance changed since the plan, step not active, not running): skipped */
  | "stale"
  /** refused by the service, or could not be sent or decided */
  | "failed"
  /** an abort whose id the bulk abort did not return */
  | "not_aborted"
  /** never attempted: interrupted (SIGINT/SIGTERM) or halted (API key refused) */
  | "not_started";

export type AppliedHow = "response" | "returned" | "verified";

export interface ChangeOutcome {
  change: ApplyChange;
  status: OutcomeStatus;
  /** why (stale, failed, not_aborted, not_started), or what confirmed it (applied by reading) */
  reason?: string;
  how?: AppliedHow;
}
