/**
 * The settings of one run: what to reach and how fast (connection), what to plan (planning), how to apply (applying)
 * and where results go (output). Their types, zod schemas and defaults are written here once; src/cli resolves them
 * from flags, environment, profile and these defaults (the order of docs/operating.md (Profiles)), and every layer below takes
 * plain values. CONTRIBUTING.md, "Adding a flag", shows how a new one enters.
 */
import { z } from "zod";
import { MAX_BATCH_SIZE, MAX_CLOCK_SKEW_MS, WINDOW_SHARE } from "./defaults.js";

// the defaults live apart, so that `--help` prints them without loading zod
export {
  CONFIG_FILE,
  DEFAULT_BATCH_SIZE,
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_LOCK_FILE,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_OPT_OUT_TAG,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RECHECK_EVERY_MS,
  DEFAULT_TIMEOUT_MS,
  MAX_BATCH_SIZE,
  MAX_CLOCK_SKEW_MS,
  WINDOW_SHARE,
} from "./defaults.js";

/** Requests a minute the client really sends under a limit of `rateLimitPerMin` (0 = no limit, so 0). */
export function sendRatePerMin(rateLimitPerMin: number): number {
  return rateLimitPerMin * WINDOW_SHARE;
}

const ShardSchema = z.object({ index: z.number().int().min(0), count: z.number().int().min(1) });

export const ConnectionSettingsSchema = z.object({
  baseUrl: z.string().min(1),
  apiKey: z.string().min(1),
  /**
   * Where the key came from, in words every auth error repeats: "the API key in <its variable>", "the API key in
   * PROD_KEY (profile prod's api_key_env)". The api room gets the words, never the variables (docs/safety.md).
   */
  keySource: z.string().min(1).optional(),
  /** the service's limit per minute as this process should see it (a shard's share; may be a fraction); 0 = off */
  rateLimitPerMin: z.number().min(0),
  concurrency: z.number().int().min(1),
  timeoutMs: z.number().int().min(1),
  insecureHttp: z.boolean(),
});
export type ConnectionSettings = z.infer<typeof ConnectionSettingsSchema>;

/**
 * What `plan`, `apply <paths> --auto-approve` and `watch` plan: each takes this object whole, so a field added here
 * reaches every planner (test/cli/settings.test.ts checks each flag on plan and apply).
 */
export const PlanningSettingsSchema = z.object({
  /** only these rules (empty: all) */
  rules: z.array(z.string()),
  /** only the instances with id % count === index */
  shard: ShardSchema.optional(),
  /** only the rules added or edited since this git ref; the removed ones listed */
  changedSince: z.string().optional(),
  /** say on stderr why each list, field page or record read is made (or saved) */
  explainRequests: z.boolean(),
  /** instances carrying this tag are changed by no rule; undefined = off */
  optOutTag: z.string().optional(),
  /** the workflow catalog to compare the live structure with (default flowrules.workflows.json, when present) */
  workflows: z.string().optional(),
  /** --state DIR: what the last run learned, so this one asks only for what changed (src/state/README.md) */
  state: z.string().optional(),
  /** with a state: a workflow last read in full longer ago than this is read in full again (default 24 h) */
  resyncAfterMs: z.number().int().positive().optional(),
  /** with a state: read everything again and rewrite the state */
  fullRefresh: z.boolean(),
  /**
   * with `plan --max-duration`: a run cut before its sync is complete plans from what was read, marked `partial`
   * (docs/operating.md, "A partial plan"); apply refuses such a plan
   */
  partial: z.boolean().optional(),
});
export type PlanningSettings = z.infer<typeof PlanningSettingsSchema>;

/**
 * How `apply` applies: one line per field in APPLYING_FLAGS (src/cli/flags.ts). `applyCommand`'s options are these
 * fields (src/commands/apply.ts derives its type from this one), optional there for the library's callers.
 */
export const ApplyingSettingsSchema = z.object({
  /** plan the rules and apply without asking */
  autoApprove: z.boolean(),
  /** journal file; default `<plan>.journal.jsonl` beside the plan */
  journal: z.string().optional(),
  /** ids per bulk request (default DEFAULT_BATCH_SIZE) */
  batchSize: z.number().int().min(1).max(MAX_BATCH_SIZE),
  /** the lock against concurrent applies; default .flowrules/apply.lock under cwd */
  lockFile: z.string().min(1),
  /** a lock of another host whose heartbeat stopped this long ago is stale */
  lockTimeoutMs: z.number().min(1000),
  /** assumed bound on the clock difference with the service, for staleness */
  clockSkewMs: z.number().min(0).max(MAX_CLOCK_SKEW_MS),
  /** staleness is judged again at least this often while changes are sent (default 60 s) */
  recheckEveryMs: z.number().min(1000),
  /** no change starts after this long from the start of the run; the rest are deferred */
  maxDurationMs: z.number().min(0).optional(),
  /** how long to wait for another apply's lock to free before refusing (default: refuse at once) */
  lockWaitMs: z.number().min(0).optional(),
});
export type ApplyingSettings = z.infer<typeof ApplyingSettingsSchema>;

/** How `watch` runs its cycles: one line per field in WATCH_FLAGS (src/cli/flags.ts). */
export const WatchSettingsSchema = z.object({
  /** apply each cycle's enforce changes (without it, only log what it would do) */
  apply: z.boolean(),
  /** the poll interval; derived from the budget when absent */
  intervalMs: z.number().int().min(0).optional(),
  /** the idle polls' share of the rate limit, in percent */
  budgetPercent: z.number().gt(0).max(100),
  /** serve /metrics, /healthz and /readyz on this port (0 = any free port) */
  metricsPort: z.number().int().min(0).max(65535).optional(),
  metricsHost: z.string().min(1),
});
export type WatchSettings = z.infer<typeof WatchSettingsSchema>;

export const OutputSettingsSchema = z.object({
  quiet: z.boolean(),
  detailedExitcode: z.boolean(),
  /** webhooks told at the end (--notify, its variable or a profile's `notify`: src/model/settings-table.ts) */
  notify: z.array(z.instanceof(URL)),
});
export type OutputSettings = z.infer<typeof OutputSettingsSchema>;

/** Which profile of which file a run uses: named wherever the service is (plan header, notifications, logs). */
export type ProfileRef = { name: string; file: string };

/** The service as people read it in every output that names it: its URL, and the profile that chose it. */
export function serviceName(baseUrl: string, profile: string | undefined): string {
  return profile ? `${baseUrl} (profile ${profile})` : baseUrl;
}
