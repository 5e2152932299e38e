/**
 * What an apply run reports while it works, as data: the views in src/render take these types from here, not from
 * the executor that produces them.
 */

/** One staleness check: the list per workflow and the reads it led to. */
export interface StalenessCheck {
  /** when it started (this host's clock) */
  at: string;
  /** instances updated since this instant were listed (the previous check minus the clock-skew margin) */
  since: string;
  workflows: number;
  /** instances of those workflows listed as updated */
  listed: number;
  /** planned instances with changes left that were read to judge them */
  read: number;
  /** changes skipped as stale by this check */
  stale: number;
}

/** Where an apply stands, as data: views turn it into a terminal line or a `progress` event. */
export interface ApplyProgress {
  phase: "checking" | "sending";
  /** planned changes (of this shard) */
  total: number;
  /** changes with an outcome so far (any status, earlier runs' included) */
  settled: number;
  /** changes settled by this run's own work (not skipped from the journal), for the rate */
  settledThisRun: number;
  applied: number;
  stale: number;
  failed: number;
  deferred: number;
  alreadyDone: number;
  /** staleness checks so far */
  checks: number;
  startedAt: number;
}
