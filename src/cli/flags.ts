/**
 * What a user can type: the flags of the settings every verb shares, their environment variables and profile keys,
 * and the helpers that register them on a command. `--help` and a completion Tab load this file, never
 * ./settings.ts (which turns what was typed into settings, with zod and the profile file's YAML), so it imports
 * nothing but commander and plain constants (docs/performance.md, "Start-up"; CONTRIBUTING.md, "Adding a flag").
 */
import { Option, type Command } from "commander";
import type { Profile } from "../model/config.js";
import type { ApplyingSettings, PlanningSettings, WatchSettings } from "../model/settings.js";
import {
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
  WINDOW_SHARE,
} from "../model/defaults.js";
import { DEFAULT_BUDGET_PERCENT } from "../watch/settings.js";

export const CONFIG_ENV = "FLOWRULES_CONFIG";
export const PROFILE_ENV = "FLOWRULES_PROFILE";

/** Where a setting may come from besides its default: a flag, an environment variable, a profile key. */
export interface SettingSource {
  /** commander's flag spelling, e.g. "--rate-limit <n>" */
  flags?: string;
  env?: string;
  profile?: keyof Profile;
  help: string;
  /** a value given as the flag and the variable alike is repeatable (--notify) */
  repeatable?: boolean;
  /** an empty variable is a value, not "unset" (FLOWRULES_OPT_OUT_TAG="" turns the opt-out off) */
  emptyEnvIsValue?: boolean;
}

/** The settings every verb that talks to the service shares, and how each one is given. */
export const CONNECTION_FLAGS = {
  baseUrl: { flags: "--base-url <url>", env: "FLOWRULES_BASE_URL", profile: "base_url", help: "service base URL, e.g. https://host/api" },
  rateLimit: {
    flags: "--rate-limit <n>",
    env: "FLOWRULES_RATE_LIMIT",
    profile: "rate_limit",
    help: `the service's limit in requests a minute; the client sends at most ${WINDOW_SHARE * 100} % of it in any 60 s, 0 = off (default ${DEFAULT_RATE_LIMIT}, shared by --shard workers)`,
  },
  concurrency: { flags: "--concurrency <n>", help: `requests in flight at most (default ${DEFAULT_CONCURRENCY})` },
  timeout: { flags: "--timeout <duration>", help: `per-request timeout (10s, 2m; default ${DEFAULT_TIMEOUT_MS / 1000}s)` },
  insecureHttp: { flags: "--insecure-http", help: "allow plain http:// to a host that is not loopback" },
  profile: { flags: "--profile <name>", env: PROFILE_ENV, help: "use this profile of flowrules.config.yaml (service, key variable, limits)" },
  config: { flags: "--config <file>", env: CONFIG_ENV, help: "the profiles file (default: flowrules.config.yaml in the current directory or the nearest parent up to the repository root)" },
} satisfies Record<string, SettingSource>;

/**
 * Flags of `plan` and `apply --auto-approve` alike: one line per field of PlanningSettings (the compiler asks for it),
 * saying where the setting may come from. How the value picked becomes the setting is its line in PLANNING_READS
 * (./settings.ts; the compiler asks for that one too).
 */
export const PLANNING_FLAGS: { [K in keyof PlanningSettings]-?: SettingSource } = {
  rules: { flags: "--rule <name>", help: "plan only this rule; a glob such as 'approve-*' selects several (repeatable)", repeatable: true },
  shard: { flags: "--shard <i/n>", help: "plan only the instances with id % n == i (n workers share one rule set), e.g. 0/4" },
  changedSince: { flags: "--changed-since <git-ref>", help: "plan only the rules added or edited since this git ref; list removed ones" },
  explainRequests: { flags: "--explain-requests", help: "say on stderr why each list, field page or record read is made (or saved)" },
  optOutTag: {
    flags: "--opt-out-tag <tag>",
    env: "FLOWRULES_OPT_OUT_TAG",
    profile: "opt_out_tag",
    help: `instances carrying this tag are changed by no rule (default ${DEFAULT_OPT_OUT_TAG}; "" turns it off)`,
    emptyEnvIsValue: true,
  },
  workflows: { flags: "--workflows <file>", profile: "workflows", help: "workflow catalog to compare the live workflows with (default flowrules.workflows.json)" },
  state: {
    flags: "--state <dir>",
    env: "FLOWRULES_STATE",
    profile: "state",
    help: "keep what each run learned in this dir and ask the service only for what changed since; the plan is the same as without it",
  },
  resyncAfterMs: {
    flags: "--resync-after <duration>",
    help: "with --state: read a workflow in full again when its last full read is older than this (30m, 12h, 7d; default 24h)",
  },
  fullRefresh: { flags: "--full-refresh", help: "with --state: read everything again and rewrite the state" },
};

/**
 * Flags of `apply`: one line per field of ApplyingSettings (the compiler asks for it); how each becomes the setting is
 * its line in APPLYING_READS (./settings.ts). Durations take a unit (src/text/duration.ts).
 */
export const APPLYING_FLAGS: { [K in keyof ApplyingSettings]-?: SettingSource } = {
  autoApprove: { flags: "--auto-approve", help: "plan the rules and apply without asking (for schedules)" },
  journal: { flags: "--journal <file>", help: "journal file (default: <plan>.journal.jsonl beside the plan)" },
  batchSize: { flags: "--batch-size <n>", help: `ids per bulk abort request (default ${DEFAULT_BATCH_SIZE}, at most ${MAX_BATCH_SIZE})` },
  lockFile: { flags: "--lock-file <file>", help: `lock against concurrent applies (default ${DEFAULT_LOCK_FILE})` },
  lockTimeoutMs: {
    flags: "--lock-timeout <duration>",
    help: `a lock of another host whose heartbeat stopped this long ago is stale (90s, 30m, 2h; default ${DEFAULT_LOCK_TIMEOUT_MS / 60_000}m); a live apply on this host is never taken over`,
  },
  recheckEveryMs: {
    flags: "--recheck-every <duration>",
    help: `judge staleness again at least this often while sending changes (30s, 5m; a bare number is seconds; default ${DEFAULT_RECHECK_EVERY_MS / 1000}s)`,
  },
  lockWaitMs: { flags: "--lock-wait <duration>", help: "while another apply holds the lock, wait this long for it to finish (90s, 10m) instead of refusing at once" },
  maxDurationMs: { flags: "--max-duration <duration>", help: "start no change after this long (90s, 14m, 2h); the rest are deferred and the same apply again resumes them" },
  clockSkewMs: { flags: "--clock-skew <duration>", help: `assumed bound on the clock difference with the service, for staleness (30s, 2m; at most 1d; default ${DEFAULT_CLOCK_SKEW_MS / 1000}s)` },
};

/** Flags of `watch`: one line per field of WatchSettings; how each becomes the setting is its line in WATCH_READS. */
export const WATCH_FLAGS: { [K in keyof WatchSettings]-?: SettingSource } = {
  apply: { flags: "--apply", help: "apply each cycle's enforce changes exactly once (without it, only log what it would do)" },
  intervalMs: { flags: "--interval <duration>", help: "poll interval (10s, 1m); default derived from --budget, never below 5 s" },
  budgetPercent: { flags: "--budget <percent>", help: `share of the rate limit idle polling may use (default ${DEFAULT_BUDGET_PERCENT})` },
  metricsPort: { flags: "--metrics-port <n>", help: "serve GET /metrics (Prometheus) and GET /healthz on this port (0 = any free port)" },
  metricsHost: { flags: "--metrics-host <host>", help: "address of the metrics endpoint (default 127.0.0.1)" },
};

export const OUTPUT_FLAGS = {
  notify: {
    flags: "--notify <url>",
    env: "FLOWRULES_NOTIFY_URL",
    profile: "notify",
    help: "POST a JSON summary to this webhook at the end (repeatable; the variable takes a comma-separated list)",
    repeatable: true,
  },
} satisfies Record<string, SettingSource>;

/** The help text of a setting: what it does, then where else it may come from. */
function helpOf(s: SettingSource): string {
  const more = [s.env ? `env ${s.env}` : undefined, s.profile ? `profile ${s.profile}` : undefined].filter((x) => x !== undefined);
  if (more.length === 0) return s.help;
  // "… (default 100)" becomes "… (default 100; env X; profile y)": one parenthesis, not two
  return s.help.endsWith(")") ? `${s.help.slice(0, -1)}; ${more.join("; ")})` : `${s.help} (${more.join("; ")})`;
}

export const collect = (v: string, acc: string[]): string[] => [...acc, v];

/** The commander option of a setting (no default: defaults are applied in ./settings.ts, after env and profile). */
export function optionOf(s: SettingSource): Option {
  const o = new Option(s.flags ?? "", helpOf(s));
  if (s.repeatable) o.argParser(collect).default([]);
  return o;
}

/** Registers the flags of a table; `help` replaces a line's text for one verb (its env and profile still named). */
export function addOptions(cmd: Command, sources: Record<string, SettingSource>, help: Record<string, string> = {}): Command {
  for (const [key, s] of Object.entries(sources)) {
    const text = help[key];
    if (s.flags) cmd.addOption(optionOf(text === undefined ? s : { ...s, help: text }));
  }
  return cmd;
}

/** How the planning flags read on `apply`, where they apply to rule paths (a saved plan is applied as planned). */
const APPLY_HELP: Partial<Record<keyof PlanningSettings, string>> = {
  rules: "with rule paths: plan only this rule; a glob such as 'approve-*' selects several (repeatable)",
  shard: "apply only the changes (or, with rule paths, plan only the instances) with id % n == i, e.g. 0/4",
};

/** The planning flags, the same on `plan` and `apply` (and `watch`). */
export function addPlanningOptions(cmd: Command, verb: "plan" | "apply"): Command {
  return addOptions(cmd, PLANNING_FLAGS, verb === "apply" ? APPLY_HELP : {});
}

/** `--profile` and `--config` alone, for the verbs that read a profile's catalog but never call the service. */
export function addProfileOptions(cmd: Command): Command {
  return addOptions(cmd, { profile: CONNECTION_FLAGS.profile, config: CONNECTION_FLAGS.config });
}

/** `--workflows FILE` worded for one verb, still naming the profile key it falls back to. */
export function workflowsOption(help: string): Option {
  return optionOf({ ...PLANNING_FLAGS.workflows, help });
}

/**
 * `--color` / `--no-color`, program-wide like `--log-format`: colours on or off whatever the terminal; without either,
 * a terminal without NO_COLOR gets them (src/log/command-io.ts).
 */
export function addColorOptions(program: Command): Command {
  return program
    .option("--color", "colour the output even when it is not a terminal")
    .option("--no-color", "never colour the output (as NO_COLOR does)");
}

/** What `--color` / `--no-color` asked for, or undefined when neither was given. */
export function colorOf(cmd: Command): boolean | undefined {
  const v = cmd.optsWithGlobals<{ color?: unknown }>().color;
  return typeof v === "boolean" ? v : undefined;
}
