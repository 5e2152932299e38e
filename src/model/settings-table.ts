/**
 * The one table of flowrules' settings (after Renovate's lib/config/options): each entry says how a setting is given
 * (flag, environment variable, profile key), its default, how its text is read (`read`, interpreted by
 * src/cli/settings.ts), its `--help` line, its line in the config file's schema (`docs`) and its row in
 * `flowrules config`, and what its environment variable does (`envDocs`). The variables' names are ./env-names.ts (also read by the start-up's last line of defence,
 * before this table loads). The flags of every verb (src/cli/flags.ts), the profile keys (./config.ts, written out as
 * schemas/flowrules.config.schema.json), `flowrules config` and docs/cli.md (its options and its environment table)
 * derive from it.
 *
 * Plain data: `--help` and a completion Tab load it (docs/performance.md, "Start-up"), so it imports no schema
 * library, only types and constants.
 */
import type { ApplyingSettings, PlanningSettings, WatchSettings } from "./settings.js";
import * as D from "./defaults.js";
import { ENV } from "./env-names.js";

export { ENV } from "./env-names.js";

/** The profile keys of flowrules.config.yaml. */
export type ProfileKey = "base_url" | "rate_limit" | "api_key_env" | "workflows" | "notify" | "opt_out_tag" | "state";

/**
 * How a setting's text becomes its value (src/cli/settings.ts reads each kind the same way for flag, variable and
 * profile key, naming the source when it is wrong).
 */
export type Reader =
  | { kind: "switch" }
  | { kind: "text" }
  | { kind: "texts" }
  /** a path: from a profile, relative to the profile file's folder */
  | { kind: "path" }
  | { kind: "whole"; min: number; max?: number }
  /** src/text/duration.ts; `bare: "s"` where the contract writes a bare number of seconds */
  | { kind: "duration"; min?: number; bare?: "s"; max?: number }
  | { kind: "percent" }
  | { kind: "shard" }
  | { kind: "tag" }
  | { kind: "url" }
  | { kind: "urls" }
  /** the name of a variable holding the value (the API key's `api_key_env`) */
  | { kind: "variable" };

/** A setting's row in `flowrules config`: its label, and its value in words when unset or on/off. */
export interface ConfigRow {
  label: string;
  none?: string;
  on?: string;
  off?: string;
}

/** One setting: where it may come from, its default, how it is read, and the words that describe it. */
export interface SettingSource {
  /** commander's flag spelling, e.g. "--rate-limit <n>" */
  flags?: string;
  env?: string;
  profile?: ProfileKey;
  help: string;
  /** the line of the profile key in schemas/flowrules.config.schema.json */
  docs?: string;
  /**
   * what the variable does, in docs/cli.md's environment table (which adds the flag, profile key and default from
   * this entry); without it the table shows `help`
   */
  envDocs?: string;
  read?: Reader;
  default?: number | string | boolean;
  /** a value given as the flag and the variable alike is repeatable (--notify) */
  repeatable?: boolean;
  /** an empty variable is a value, not "unset" (the opt-out tag's variable set to "" turns the opt-out off) */
  emptyEnvIsValue?: boolean;
  row?: ConfigRow;
}

/** A flag that is on when given (`--full-refresh`): no value, no variable, no profile key. */
const switchFlag = (flags: string, help: string): SettingSource => ({ flags, help, read: { kind: "switch" } });
/** A flag whose value is its text as typed (`--journal <file>`). */
const textFlag = (flags: string, help: string): SettingSource => ({ flags, help, read: { kind: "text" } });

/** The settings of the connection to the service (and of the profile choice), shared by every verb that calls it. */
export const CONNECTION_SETTINGS = {
  baseUrl: {
    flags: "--base-url <url>",
    env: ENV.baseUrl,
    profile: "base_url",
    help: "service base URL, e.g. https://host/api",
    docs: `service base URL, e.g. https://tenant.example.com/api (flag --base-url, env ${ENV.baseUrl} win over it)`,
    envDocs: "The service base URL, e.g. `https://host/api`.",
    read: { kind: "url" },
    row: { label: "base url", none: `not set (--base-url, ${ENV.baseUrl} or a profile's base_url)` },
  },
  apiKey: {
    env: ENV.apiKey,
    profile: "api_key_env",
    help: "the API key: never a flag, never the file",
    docs: `the NAME of the environment variable holding this tenant's API key (default ${ENV.apiKey}); the key itself never goes in this file`,
    envDocs:
      "The API key, sent as `Authorization: Api-Key <key>` (a profile's `api_key_env` names another variable to read it from). Read only from the environment, never from a flag or a file, so it stays out of shell history and CI logs; it is scrubbed from every output, log line and error.",
    read: { kind: "variable" },
    row: { label: "api key" },
  },
  rateLimit: {
    flags: "--rate-limit <n>",
    env: ENV.rateLimit,
    profile: "rate_limit",
    help: `the service's limit in requests a minute; the client sends at most ${D.WINDOW_SHARE * 100} % of it in any 60 s, 0 = off (default ${D.DEFAULT_RATE_LIMIT}, shared by --shard workers)`,
    docs: `the service's limit in requests a minute for this tenant's key (default ${D.DEFAULT_RATE_LIMIT}; 0 = no client-side limit)`,
    envDocs: `The service's limit in requests a minute; the client sends at most ${D.WINDOW_SHARE * 100} % of it in any 60 s, 0 = off.`,
    read: { kind: "whole", min: 0 },
    default: D.DEFAULT_RATE_LIMIT,
    row: { label: "rate limit" },
  },
  concurrency: {
    flags: "--concurrency <n>",
    help: `requests in flight at most (default ${D.DEFAULT_CONCURRENCY})`,
    read: { kind: "whole", min: 1 },
    default: D.DEFAULT_CONCURRENCY,
    row: { label: "concurrency" },
  },
  timeout: {
    flags: "--timeout <duration>",
    help: `per-request timeout (10s, 2m; default ${D.DEFAULT_TIMEOUT_MS / 1000}s)`,
    read: { kind: "duration", min: 1 },
    default: D.DEFAULT_TIMEOUT_MS,
    row: { label: "timeout" },
  },
  insecureHttp: {
    flags: "--insecure-http",
    help: "allow plain http:// to a host that is not loopback",
    read: { kind: "switch" },
    row: { label: "insecure http", on: "allowed", off: "plain http:// only to loopback" },
  },
  profile: {
    flags: "--profile <name>",
    env: ENV.profile,
    help: "use this profile of flowrules.config.yaml (service, key variable, limits)",
    envDocs:
      "The profile of the profiles file to use (otherwise the file's `default_profile`). A profile's values come after flags and environment variables, before defaults.",
  },
  config: {
    flags: "--config <file>",
    env: ENV.config,
    help: "the profiles file (default: flowrules.config.yaml in the current directory or the nearest parent up to the repository root)",
    envDocs:
      "The profiles file; without it, `flowrules.config.yaml` in the current directory or the nearest parent up to the repository root, when present.",
  },
} satisfies Record<string, SettingSource>;

/**
 * What to plan, the same on `plan`, `apply --auto-approve` and `watch`: one entry per field of PlanningSettings (the
 * compiler asks for it).
 */
export const PLANNING_SETTINGS: { [K in keyof PlanningSettings]-?: SettingSource } = {
  rules: {
    flags: "--rule <name>",
    help: "plan only this rule; a glob such as 'approve-*' selects several (repeatable)",
    repeatable: true,
    read: { kind: "texts" },
  },
  shard: {
    flags: "--shard <i/n>",
    help: "plan only the instances with id % n == i (n workers share one rule set), e.g. 0/4",
    read: { kind: "shard" },
  },
  changedSince: textFlag(
    "--changed-since <git-ref>",
    "plan only the rules added or edited since this git ref; list removed ones",
  ),
  explainRequests: switchFlag(
    "--explain-requests",
    "say on stderr why each list, field page or record read is made (or saved)",
  ),
  optOutTag: {
    flags: "--opt-out-tag <tag>",
    env: ENV.optOutTag,
    profile: "opt_out_tag",
    help: `instances carrying this tag are changed by no rule (default ${D.DEFAULT_OPT_OUT_TAG}; "" turns it off)`,
    docs: `instances carrying this tag are changed by no rule (default ${D.DEFAULT_OPT_OUT_TAG}; "" turns it off)`,
    envDocs:
      "An instance carrying this tag is changed by no rule and counted as excluded; empty turns the opt-out off.",
    emptyEnvIsValue: true,
    read: { kind: "tag" },
    default: D.DEFAULT_OPT_OUT_TAG,
    row: { label: "opt-out tag", none: "none (turned off)" },
  },
  workflows: {
    flags: "--workflows <file>",
    profile: "workflows",
    help: "workflow catalog to compare the live workflows with (default flowrules.workflows.json)",
    docs: "workflow catalog file for this tenant (relative to this file), default flowrules.workflows.json",
    read: { kind: "path" },
    row: { label: "workflows", none: "flowrules.workflows.json, when present" },
  },
  state: {
    flags: "--state <dir>",
    env: ENV.state,
    profile: "state",
    help: "keep what each run learned in this dir and ask the service only for what changed since; the plan is the same as without it",
    docs: "state folder for this tenant (relative to this file)",
    envDocs:
      'The state dir of `plan` and `apply` with rule paths: what each run learned, so the next asks the service only for what changed; the plan is the same as without it (docs/operating.md, "State between runs"); `watch` keeps its bookmarks, lock and journals under `watch/` in it.',
    read: { kind: "path" },
    row: { label: "state", none: "none: every run reads afresh" },
  },
  resyncAfterMs: {
    flags: "--resync-after <duration>",
    help: "with --state: read a workflow in full again when its last full read is older than this (30m, 12h, 7d; default 24h)",
    read: { kind: "duration", min: 1000 },
  },
  fullRefresh: switchFlag("--full-refresh", "with --state: read everything again and rewrite the state"),
  partial: switchFlag(
    "--partial",
    "with --max-duration: when the time runs out before the sync is complete, plan from what was read, marked partial (for reports; apply refuses it)",
  ),
};

/** How `apply` applies: one entry per field of ApplyingSettings. Durations take a unit (src/text/duration.ts). */
export const APPLYING_SETTINGS: { [K in keyof ApplyingSettings]-?: SettingSource } = {
  autoApprove: switchFlag("--auto-approve", "plan the rules and apply without asking (for schedules)"),
  journal: textFlag("--journal <file>", "journal file (default: <plan>.journal.jsonl beside the plan)"),
  batchSize: {
    flags: "--batch-size <n>",
    help: `ids per bulk abort request (default ${D.DEFAULT_BATCH_SIZE}, at most ${D.MAX_BATCH_SIZE})`,
    read: { kind: "whole", min: 1, max: D.MAX_BATCH_SIZE },
    default: D.DEFAULT_BATCH_SIZE,
  },
  lockFile: {
    flags: "--lock-file <file>",
    help: `lock against concurrent applies (default ${D.DEFAULT_LOCK_FILE})`,
    read: { kind: "text" },
    default: D.DEFAULT_LOCK_FILE,
  },
  lockTimeoutMs: {
    flags: "--lock-timeout <duration>",
    help: `a lock of another host whose heartbeat stopped this long ago is stale (90s, 30m, 2h; default ${D.DEFAULT_LOCK_TIMEOUT_MS / 60_000}m); a live apply on this host is never taken over`,
    read: { kind: "duration", min: 1000 },
    default: D.DEFAULT_LOCK_TIMEOUT_MS,
  },
  recheckEveryMs: {
    flags: "--recheck-every <duration>",
    help: `judge staleness again at least this often while sending changes (30s, 5m; a bare number is seconds; default ${D.DEFAULT_RECHECK_EVERY_MS / 1000}s)`,
    // the contract writes `--recheck-every SECONDS` (docs/operating.md): a bare number stays seconds there
    read: { kind: "duration", bare: "s", min: 1000 },
    default: D.DEFAULT_RECHECK_EVERY_MS,
  },
  lockWaitMs: {
    flags: "--lock-wait <duration>",
    help: "while another apply holds the lock, wait this long for it to finish (90s, 10m) instead of refusing at once",
    read: { kind: "duration" },
  },
  maxDurationMs: {
    flags: "--max-duration <duration>",
    help: "start no change after this long (90s, 14m, 2h); the rest are deferred and the same apply again resumes them",
    read: { kind: "duration" },
  },
  clockSkewMs: {
    flags: "--clock-skew <duration>",
    help: `assumed bound on the clock difference with the service, for staleness (30s, 2m; at most 1d; default ${D.DEFAULT_CLOCK_SKEW_MS / 1000}s)`,
    // a margin of clocks, not a wait: more than a day is no skew (99999999d sent the year -271764)
    read: { kind: "duration", max: D.MAX_CLOCK_SKEW_MS },
    default: D.DEFAULT_CLOCK_SKEW_MS,
  },
};

/** How `watch` runs its cycles: one entry per field of WatchSettings. */
export const WATCH_SETTINGS: { [K in keyof WatchSettings]-?: SettingSource } = {
  apply: switchFlag(
    "--apply",
    "apply each cycle's enforce changes exactly once (without it, only log what it would do)",
  ),
  // its floor depends on the environment (a test-only variable lowers it): checked in src/cli/verbs/watch/run.ts
  intervalMs: {
    flags: "--interval <duration>",
    help: "poll interval (10s, 1m); default derived from --budget, never below 5 s",
    read: { kind: "duration" },
  },
  budgetPercent: {
    flags: "--budget <percent>",
    help: `share of the rate limit idle polling may use (default ${D.DEFAULT_BUDGET_PERCENT})`,
    read: { kind: "percent" },
    default: D.DEFAULT_BUDGET_PERCENT,
  },
  metricsPort: {
    flags: "--metrics-port <n>",
    help: "serve GET /metrics (Prometheus), GET /healthz (liveness) and GET /readyz (readiness) on this port (0 = any free port)",
    read: { kind: "whole", min: 0, max: 65535 },
  },
  metricsHost: {
    flags: "--metrics-host <host>",
    help: "address of the metrics endpoint (default 127.0.0.1)",
    read: { kind: "text" },
    default: "127.0.0.1",
  },
};

/** What a run tells when it ends. */
export const OUTPUT_SETTINGS = {
  notify: {
    flags: "--notify <url>",
    env: ENV.notify,
    profile: "notify",
    help: "POST a JSON summary to this webhook at the end (repeatable; the variable takes a comma-separated list)",
    docs: `webhook URL(s) told at the end of plan and apply: a list, or one string (comma-separated like ${ENV.notify})`,
    envDocs:
      "Webhooks told at the end of `plan` and `apply`, comma-separated: one JSON POST each, https:// or http:// to loopback unless `--insecure-http`.",
    repeatable: true,
    read: { kind: "urls" },
    row: { label: "notify", none: "none" },
  },
} satisfies Record<string, SettingSource>;

/** Every setting, for the derived views (profile keys, `flowrules config`, the tests). */
export const ALL_SETTINGS: ReadonlyArray<SettingSource> = [
  ...Object.values(CONNECTION_SETTINGS),
  ...Object.values(PLANNING_SETTINGS),
  ...Object.values(APPLYING_SETTINGS),
  ...Object.values(WATCH_SETTINGS),
  ...Object.values(OUTPUT_SETTINGS),
];

/**
 * The variables flowrules reads that set no setting of a run, with their line in docs/cli.md's environment table;
 * `docs: null` for a test-only one (documented beside what it tunes, docs/watch.md).
 */
export const OTHER_VARIABLES: ReadonlyArray<{ name: string; docs: string | null }> = [
  { name: ENV.debug, docs: "`1` adds the stack trace to an unexpected error (otherwise one line)." },
  { name: ENV.watchMinIntervalMs, docs: null },
  { name: ENV.watchMaxBackoffMs, docs: null },
  { name: ENV.planSpillBytes, docs: null },
  {
    name: "NO_COLOR",
    docs: "Any non-empty value turns colours off (colours are only used on a terminal anyway); `--color` turns them on regardless.",
  },
];

/** The line of a profile key in the config file's schema (from the setting that has the key). */
export function profileDocs(key: ProfileKey): string {
  return ALL_SETTINGS.find((s) => s.profile === key)?.docs ?? key;
}
