/**
 * The name of every environment variable flowrules reads, spelled here and in no other file of src
 * (test/architecture/env-names.test.ts); what each setting's variable does is its entry in ./settings-table.ts. Read
 * only in src/cli: the layers below are handed values. Imports nothing: the start-up's last line of defence
 * (src/cli/unfinished.ts) names one.
 */
export const ENV = {
  /** the API key, unless a profile's `api_key_env` names another variable */
  apiKey: "FLOWRULES_API_KEY",
  baseUrl: "FLOWRULES_BASE_URL",
  rateLimit: "FLOWRULES_RATE_LIMIT",
  optOutTag: "FLOWRULES_OPT_OUT_TAG",
  state: "FLOWRULES_STATE",
  notify: "FLOWRULES_NOTIFY_URL",
  profile: "FLOWRULES_PROFILE",
  config: "FLOWRULES_CONFIG",
  /** stack traces on an internal error */
  debug: "FLOWRULES_DEBUG",
  /** test-only: lowers the watcher's interval floor (docs/watch.md) */
  watchMinIntervalMs: "FLOWRULES_WATCH_MIN_INTERVAL_MS",
  /** test-only: a shorter cap of the watcher's back-off (docs/watch.md) */
  watchMaxBackoffMs: "FLOWRULES_WATCH_MAX_BACKOFF_MS",
  /** test-only: bytes of planned changes held in memory before a temporary file (docs/performance.md) */
  planSpillBytes: "FLOWRULES_PLAN_SPILL_BYTES",
} as const;

/** The API key variable's value in an environment handed in (src/cli passes process.env): every logger scrubs it. */
export function envKey(env: Record<string, string | undefined>): string | undefined {
  return env[ENV.apiKey];
}
