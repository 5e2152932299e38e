/**
 * The defaults of a run's settings, apart from their zod schemas (./settings.ts re-exports them): `--help` prints
 * them, and `--help` loads no schema library (docs/performance.md, "Start-up").
 */

/** The service's documented limit: about 100 requests a minute per key (docs/service.md). */
export const DEFAULT_RATE_LIMIT = 100;
/**
 * Share of the service's per-window limit the client allows itself: 95 of 100, leaving 5 for the service's own
 * rounding and for other tools on the same key. The limiter and the progress ETA both derive their pace from it.
 */
export const WINDOW_SHARE = 0.95;
export const DEFAULT_CONCURRENCY = 4;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_OPT_OUT_TAG = "no-automation";
export const DEFAULT_BATCH_SIZE = 100;
export const MAX_BATCH_SIZE = 500;
export const DEFAULT_LOCK_FILE = ".flowrules/apply.lock";
export const DEFAULT_LOCK_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_CLOCK_SKEW_MS = 60_000;
/** --clock-skew's bound: clocks a day apart are no skew, and a larger margin moved dates out of range */
export const MAX_CLOCK_SKEW_MS = 86_400_000;
export const DEFAULT_RECHECK_EVERY_MS = 60_000;
/** `flowrules history` lists this many of a watcher's last cycles unless `--last` says otherwise. */
export const DEFAULT_HISTORY_CYCLES = 10;
/** The idle polls' default share of the key's rate limit (`watch --budget`), in percent. */
export const DEFAULT_BUDGET_PERCENT = 20;
/** The profiles file looked for in the current directory (docs/operating.md, Profiles). */
export const CONFIG_FILE = "flowrules.config.yaml";
/** The workflow catalog `flowrules pull` writes and validate, test and explain read (docs/workflows.md). */
export const CATALOG_FILE = "flowrules.workflows.json";
