/**
 * Defaults of `flowrules watch` and the interval they give, apart from the loop so that the CLI reads them without
 * loading the engine (this module imports only constants).
 */

export { DEFAULT_BUDGET_PERCENT } from "../model/defaults.js";
/** No poll interval below this (a test-only environment variable lowers it: docs/watch.md). */
export const MIN_INTERVAL_MS = 5_000;
/** Rules whose meaning moves with time (relative dates, time in conditions, windows) get a cycle at least this often. */
export const DEFAULT_TIME_CYCLE_MS = 5 * 60_000;
/**
 * Longest wait between attempts while cycles fail or hold rules back (the interval doubled per cycle in a row that
 * was not ok, up to this). A service still failing at this back-off makes /healthz fail: the process cannot work.
 */
export const MAX_BACKOFF_MS = 5 * 60_000;
/** A cycle's errors listed on stderr, one line each; beyond it one line says how many more. */
export const ERROR_LINES_PER_CYCLE = 20;

/** The wait before the next attempt after `failures` in a row (1, 2, …): the interval doubled each time, capped. */
export function backoffMs(intervalMs: number, failures: number, maxMs: number = MAX_BACKOFF_MS): number {
  return Math.min(maxMs, intervalMs * 2 ** Math.min(Math.max(failures - 1, 0), 20));
}
/** Finished cycle folders kept under <state>/watch/cycles (the newest; older ones are removed). */
export const KEEP_CYCLES = 50;
/** Changes a cycle lists on stderr, one line each; beyond it one line says how many more (all are in the history). */
export const CHANGE_LINES_PER_CYCLE = 100;

/**
 * Idle cost: one request per workflow per poll. Within `budget` percent of the limit (requests a minute) that is a
 * poll every 60 s · workflows / (limit · budget / 100); never below the minimum. No limit (0): the minimum.
 */
export function derivedIntervalMs(workflows: number, ratePerMin: number, budgetPercent: number, minMs: number): number {
  if (!(ratePerMin > 0) || workflows === 0) return minMs;
  // 5 % under the budget, whole seconds: the polls' own reads when they find an update stay within it too
  const perMin = (ratePerMin * budgetPercent * 0.95) / 100;
  return Math.max(minMs, Math.ceil((60_000 * workflows) / perMin / 1000) * 1000);
}

/**
 * The wait after a poll that asked `requests` (its lists, and a read per workflow it found updated), so that polling
 * stays within `budget` percent of the limit when the tenant is busy too: a poll that finds updates costs more than
 * the one list per workflow the interval was derived from. Never below `intervalMs`; no limit (0): the interval.
 */
export function pollGapMs(intervalMs: number, requests: number, ratePerMin: number, budgetPercent: number): number {
  if (!(ratePerMin > 0) || !(budgetPercent > 0)) return intervalMs;
  const perMin = (ratePerMin * budgetPercent * 0.95) / 100;
  return Math.max(intervalMs, Math.ceil((60_000 * requests) / perMin / 1000) * 1000);
}
