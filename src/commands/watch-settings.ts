/** Defaults of `flowrules watch`, apart from the loop so that the CLI reads them without loading the engine. */

/** The idle polls' default share of the key's rate limit, in percent. */
export const DEFAULT_BUDGET_PERCENT = 20;
/** No poll interval below this (a test-only environment variable lowers it: docs/watch.md). */
export const MIN_INTERVAL_MS = 5_000;
export const MIN_INTERVAL_ENV = "FLOWRULES_WATCH_MIN_INTERVAL_MS";
/** Rules whose meaning moves with time (relative dates, time in conditions, windows) get a cycle at least this often. */
export const DEFAULT_TIME_CYCLE_MS = 5 * 60_000;
