/**
 * The one place where flags, environment and profiles become the typed settings of a run (src/model/settings.ts).
 * Each setting is looked up in the order of docs/operating.md (Profiles) — flag > environment variable > profile > default — and
 * each source is named in the message when its value is wrong. Help texts are drawn from the same table, so a flag's
 * help always names the variable it falls back to.
 *
 * Adding a planning flag (CONTRIBUTING.md, "Adding a flag"): a field in PlanningSettingsSchema, its line in
 * PLANNING_FLAGS below (the compiler asks for it), and its use in the planner. `plan` and `apply --auto-approve` both
 * register PLANNING_FLAGS and pass `planning` whole, so they accept it and plan alike.
 */
import { resolve } from "node:path";
import { Option, type Command } from "commander";
import { z } from "zod";
import { InsecureUrlError } from "../api/errors.js";
import { isLoopbackHost } from "../api/url-guard.js";
import type { Profile } from "../model/config.js";
import { UserError } from "../model/errors.js";
import {
  ConnectionSettingsSchema,
  DEFAULT_API_KEY_ENV,
  DEFAULT_CONCURRENCY,
  DEFAULT_OPT_OUT_TAG,
  DEFAULT_RATE_LIMIT,
  DEFAULT_TIMEOUT_MS,
  OutputSettingsSchema,
  PlanningSettingsSchema,
  WINDOW_SHARE,
  type ConnectionSettings,
  type OutputSettings,
  type PlanningSettings,
  type ProfileRef,
} from "../model/settings.js";
import { notifyUrls, parseNotifyUrl } from "../notify/urls.js";
import { parseShard, shardLabel, type Shard } from "../plan/shard.js";
import { tagProblem } from "../rules/operations.js";
import { parseResyncAfter } from "./state.js";
import { plainDecimal } from "../model/plain-decimal.js";
import { apiKeyProblem } from "../api/key-check.js";
import { CONFIG_ENV, PROFILE_ENV, loadProfile, type LoadedProfile } from "./profiles.js";
import { processIO, type CommandIO } from "../log/command-io.js";
import { commandLogger, withLogger } from "../log/index.js";

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

/** A planning setting: where it may come from, and how the value picked (or none) becomes the setting. */
export interface PlanningSource<T> extends SettingSource {
  read: (picked: Picked | undefined, src: Sources) => T | undefined;
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
  timeout: { flags: "--timeout <ms>", help: `per-request timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS})` },
  insecureHttp: { flags: "--insecure-http", help: "allow plain http:// to a host that is not loopback" },
  profile: { flags: "--profile <name>", env: PROFILE_ENV, help: "use this profile of flowrules.config.yaml (service, key variable, limits)" },
  config: { flags: "--config <file>", env: CONFIG_ENV, help: "the profiles file (default flowrules.config.yaml in the current directory)" },
} satisfies Record<string, SettingSource>;

/**
 * Flags of `plan` and `apply --auto-approve` alike: one line per field of PlanningSettings (the compiler asks for it),
 * saying where the setting may come from and how the value picked becomes it. planningFrom reads them all.
 */
export const PLANNING_FLAGS: { [K in keyof PlanningSettings]-?: PlanningSource<PlanningSettings[K]> } = {
  rules: { flags: "--rule <name>", help: "plan only this rule; a glob such as 'approve-*' selects several (repeatable)", repeatable: true, read: (p) => Strings.parse(p?.value ?? []) },
  shard: {
    flags: "--shard <i/n>",
    help: "plan only the instances with id % n == i (n workers share one rule set), e.g. 0/4",
    read: (p) => (p ? parseShard(p.value) : undefined),
  },
  changedSince: {
    flags: "--changed-since <git-ref>",
    help: "plan only the rules added or edited since this git ref; list removed ones",
    read: (p) => (typeof p?.value === "string" ? p.value : undefined),
  },
  explainRequests: {
    flags: "--explain-requests",
    help: "say on stderr why each list, field page or record read is made (or saved)",
    read: (p) => p?.value === true,
  },
  optOutTag: {
    flags: "--opt-out-tag <tag>",
    env: "FLOWRULES_OPT_OUT_TAG",
    profile: "opt_out_tag",
    help: `instances carrying this tag are changed by no rule (default ${DEFAULT_OPT_OUT_TAG}; "" turns it off)`,
    emptyEnvIsValue: true,
    read: (p) => optOutTagOf(p),
  },
  workflows: {
    flags: "--workflows <file>",
    profile: "workflows",
    help: "workflow catalog to compare the live workflows with (default flowrules.workflows.json)",
    read: (p, src) => pathOf(p, src),
  },
  state: {
    flags: "--state <dir>",
    env: "FLOWRULES_STATE",
    profile: "state",
    help: "keep what each run learned in this dir and ask the service only for what changed since; the plan is the same as without it",
    read: (p, src) => pathOf(p, src),
  },
  resyncAfterMs: {
    flags: "--resync-after <duration>",
    help: "with --state: read a workflow in full again when its last full read is older than this (30m, 12h, 7d; default 24h)",
    read: (p) => (typeof p?.value === "string" ? parseResyncAfter(p.value) : undefined),
  },
  fullRefresh: {
    flags: "--full-refresh",
    help: "with --state: read everything again and rewrite the state",
    read: (p) => p?.value === true,
  },
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

const collect = (v: string, acc: string[]): string[] => [...acc, v];

/** The commander option of a setting (no default: defaults are applied here, after env and profile). */
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

/** The planning flags, the same on `plan` and `apply` (and `watch` when it comes). */
export function addPlanningOptions(cmd: Command, verb: "plan" | "apply"): Command {
  return addOptions(cmd, PLANNING_FLAGS, verb === "apply" ? APPLY_HELP : {});
}

/** flags and environment of one run, and the profile they chose */
export interface Sources {
  opts: Record<string, unknown>;
  env: Record<string, string | undefined>;
  profile?: LoadedProfile;
}

/** The profile of this run (none when no file or no name), from --config/--profile and their variables. */
export function sourcesOf(opts: Record<string, unknown>, env: Record<string, string | undefined>, cwd = process.cwd()): Sources {
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const profile = loadProfile({ config: str(opts.config), profile: str(opts.profile) }, env, cwd);
  return { opts, env, ...(profile ? { profile } : {}) };
}

function profileRef(src: Sources): ProfileRef | undefined {
  return src.profile ? { name: src.profile.name, file: src.profile.file } : undefined;
}

/** commander's key of a flag: "--rate-limit <n>" → "rateLimit" */
function attr(flags: string): string {
  const long = /--([a-z0-9-]+)/.exec(flags)?.[1] ?? "";
  return long.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export interface Picked {
  value: unknown;
  /** the source in words, for messages: "--rate-limit", "FLOWRULES_RATE_LIMIT", "flowrules.config.yaml:7:17: rate_limit of profile prod" */
  from: string;
  kind: "flag" | "env" | "profile";
}

/**
 * The first source that gives the setting: flag, then environment, then profile. An empty variable counts as unset
 * unless `emptyEnvIsValue` (the opt-out tag, where "" turns it off).
 */
export function pick(s: SettingSource, src: Sources): Picked | undefined {
  if (s.flags) {
    const v = src.opts[attr(s.flags)];
    if (v !== undefined && !(Array.isArray(v) && v.length === 0)) return { value: v, from: s.flags.split(" ")[0] ?? s.flags, kind: "flag" };
  }
  if (s.env) {
    const v = src.env[s.env];
    if (v !== undefined && (v !== "" || s.emptyEnvIsValue === true)) return { value: v, from: s.env, kind: "env" };
  }
  if (s.profile && src.profile) {
    const v = src.profile.values[s.profile];
    const where = src.profile.at[s.profile] ?? src.profile.file;
    if (v !== undefined) return { value: v, from: `${where}: ${s.profile} of profile ${src.profile.name}`, kind: "profile" };
  }
  return undefined;
}

function wholeNumber(p: Picked | undefined, min: number): number | undefined {
  if (p === undefined) return undefined;
  // plain decimal digits only: Number() would also take "0x10", "1e3" and "" (issue 28)
  const n = typeof p.value === "number" ? p.value : plainDecimal(String(p.value));
  if (!Number.isInteger(n) || n < min) {
    throw new UserError(`${p.from} must be a whole number ≥ ${min}, got ${JSON.stringify(p.value)}`);
  }
  return n;
}

/** A path from a profile resolves against the profile file's folder; from a flag or variable, against cwd. */
function pathOf(p: Picked | undefined, src: Sources): string | undefined {
  if (p === undefined || typeof p.value !== "string") return undefined;
  return p.kind === "profile" && src.profile ? resolve(src.profile.dir, p.value) : p.value;
}

/** Every API key this process resolved: scrubbed from logs and from the last-resort error line (src/cli/index.ts). */
const resolvedKeys = new Set<string>();
export function runSecrets(): string[] {
  return [...resolvedKeys];
}

/** Two spellings of one service ("…/api" and "…/api/") are one service; an unparsable URL is only itself. */
function sameService(a: string, b: string): boolean {
  const norm = (u: string): string => {
    try {
      return new URL(u).href.replace(/\/+$/, "");
    } catch {
      return u;
    }
  };
  return norm(a) === norm(b);
}

/**
 * The API key and where it came from (docs/operating.md, Profiles): FLOWRULES_API_KEY, else the variable the profile's
 * api_key_env names. Never a flag, never the file. A profile's key goes only to the profile's own base_url: a URL from
 * --base-url or FLOWRULES_BASE_URL that the profile did not name needs its key in FLOWRULES_API_KEY.
 */
function apiKeyOf(src: Sources, base: Picked | undefined, baseUrl: string): { apiKey: string; keySource: string } {
  const fromEnv = src.env[DEFAULT_API_KEY_ENV];
  if (fromEnv) return { apiKey: fromEnv, keySource: `the API key in ${DEFAULT_API_KEY_ENV}` };
  const profile = src.profile;
  const keyEnv = profile?.values.api_key_env;
  if (profile === undefined || keyEnv === undefined || keyEnv === DEFAULT_API_KEY_ENV) {
    throw new UserError(`no API key: set ${DEFAULT_API_KEY_ENV} (it is never taken as a flag or from a file, so it stays out of shell history and CI logs)`);
  }
  const own = profile.values.base_url;
  if (base?.kind !== "profile" && (own === undefined || !sameService(own, baseUrl))) {
    const named = own === undefined ? "names no base_url" : `names ${own}`;
    throw new UserError(
      `${base?.from ?? "--base-url"} ${baseUrl}: profile ${profile.name} ${named}, and its key (${keyEnv}, its api_key_env) goes to no other service; set ${DEFAULT_API_KEY_ENV} to the key for ${baseUrl}`,
    );
  }
  const apiKey = src.env[keyEnv];
  if (!apiKey) {
    throw new UserError(
      `no API key: set ${keyEnv} (the api_key_env of profile ${profile.name}) or ${DEFAULT_API_KEY_ENV} (it is never taken as a flag or from a file, so it stays out of shell history and CI logs)`,
    );
  }
  return { apiKey, keySource: `the API key in ${keyEnv} (profile ${profile.name}'s api_key_env)` };
}

/**
 * The API key if one is set (FLOWRULES_API_KEY, else the profile's api_key_env), for a verb that sends nothing and
 * may do without: `state show` checks a state's MAC with it.
 */
export function apiKeyFrom(src: Sources): string | undefined {
  const keyEnv = src.profile?.values.api_key_env;
  const key = src.env[DEFAULT_API_KEY_ENV] || (keyEnv !== undefined ? src.env[keyEnv] : undefined);
  if (!key) return undefined;
  resolvedKeys.add(key);
  return key;
}

/**
 * Connection settings, or a UserError that says what to set. The rate budget is per API key, and `--shard i/n`
 * workers share one key: when the limit comes from the default or a profile (the tenant's budget), each worker takes
 * 1/n of it, so together they stay within it; a limit from a flag or variable is each worker's own (a key per worker).
 */
export function connectionFrom(src: Sources, shard?: Shard): ConnectionSettings {
  const C = CONNECTION_FLAGS;
  const base = pick(C.baseUrl, src);
  const baseUrl = typeof base?.value === "string" ? base.value : undefined;
  if (!baseUrl) {
    throw new UserError("no service URL: pass --base-url, set FLOWRULES_BASE_URL or choose a profile with a base_url (e.g. http://127.0.0.1:4010/api for `flowrules sandbox`)");
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("protocol");
  } catch {
    throw new UserError(`${base?.from ?? "--base-url"} is not an http(s) URL: ${JSON.stringify(baseUrl)}`);
  }
  const insecureHttp = src.opts.insecureHttp === true;
  // refused here, before any rule or plan file is read and long before a socket could open (the client checks too)
  if (!insecureHttp && url.protocol === "http:" && !isLoopbackHost(url.hostname)) throw new UserError(new InsecureUrlError(url.host, "--insecure-http").message);
  const rate = pick(C.rateLimit, src);
  const rateLimit = wholeNumber(rate, 0);
  const concurrency = wholeNumber(pick(C.concurrency, src), 1) ?? DEFAULT_CONCURRENCY;
  const timeoutMs = wholeNumber(pick(C.timeout, src), 1) ?? DEFAULT_TIMEOUT_MS;
  const { apiKey, keySource } = apiKeyOf(src, base, baseUrl);
  resolvedKeys.add(apiKey);
  // characters a header cannot carry are refused here, naming where the key came from, before any rule file or request
  const keyProblem = apiKeyProblem(apiKey, keySource);
  if (keyProblem) throw new UserError(keyProblem);
  const shared = rate === undefined || rate.kind === "profile";
  const budget = rateLimit ?? DEFAULT_RATE_LIMIT;
  return ConnectionSettingsSchema.parse({
    baseUrl,
    apiKey,
    keySource,
    rateLimitPerMin: shard && shared ? budget / shard.count : budget,
    concurrency,
    timeoutMs,
    insecureHttp,
  });
}

/** The opt-out tag in effect from the value picked (flag, environment, profile), else the default; empty turns it off. */
function optOutTagOf(p: Picked | undefined): string | undefined {
  const raw = p === undefined ? DEFAULT_OPT_OUT_TAG : String(p.value);
  if (raw === "") return undefined;
  const problem = tagProblem(raw);
  if (problem) {
    throw new UserError(`${p?.from ?? "--opt-out-tag"} ${JSON.stringify(raw.slice(0, 80))}: ${problem}; give a tag as the product shows it, or "" to turn the opt-out off`);
  }
  return raw;
}

/** The opt-out tag alone (explain has it without the rest of the planning). */
export function optOutTagFrom(src: Sources): string | undefined {
  return optOutTagOf(pick(PLANNING_FLAGS.optOutTag, src));
}

const Strings = z.array(z.string());

/** What to plan, the same for `plan`, `apply --auto-approve` and `watch`: every line of PLANNING_FLAGS. */
export function planningFrom(src: Sources): PlanningSettings {
  const values: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(PLANNING_FLAGS)) {
    const value: unknown = s.read(pick(s, src), src);
    if (value !== undefined) values[key] = value;
  }
  return PlanningSettingsSchema.parse(values);
}

/** Webhooks: the flag's URLs, else the variable's (comma-separated), else the profile's. */
function notifyFrom(src: Sources, insecureHttp: boolean): URL[] {
  const p = pick(OUTPUT_FLAGS.notify, src);
  if (p === undefined) return [];
  if (p.kind === "flag") return notifyUrls(Strings.parse(p.value), {}, insecureHttp);
  if (p.kind === "env") return notifyUrls([], { FLOWRULES_NOTIFY_URL: String(p.value) }, insecureHttp);
  // a profile's single string may list several, comma-separated, as FLOWRULES_NOTIFY_URL does
  const list = (Array.isArray(p.value) ? Strings.parse(p.value) : String(p.value).split(",")).map((u) => u.trim()).filter((u) => u !== "");
  try {
    return [...new Map(list.map((u) => parseNotifyUrl(u, insecureHttp)).map((u) => [u.href, u])).values()];
  } catch (err) {
    // the check's words name the flag; the value came from the profile, so say where it is written
    if (err instanceof UserError) throw new UserError(`${p.from}: ${err.message.replace(/^--notify: /, "")}`);
    throw err;
  }
}

function outputFrom(src: Sources, insecureHttp: boolean): OutputSettings {
  return OutputSettingsSchema.parse({
    quiet: src.opts.quiet === true,
    detailedExitcode: src.opts.detailedExitcode === true,
    notify: notifyFrom(src, insecureHttp),
  });
}

/** Everything `plan` and `apply` need, resolved once. */
export interface RunSettings {
  profile?: ProfileRef;
  connection: ConnectionSettings;
  planning: PlanningSettings;
  output: OutputSettings;
}

export function runSettings(opts: Record<string, unknown>, env: Record<string, string | undefined>, cwd = process.cwd()): RunSettings {
  const src = sourcesOf(opts, env, cwd);
  // the shard first (its share of the rate budget), then the connection, then the rest of the planning
  const shard = pick(PLANNING_FLAGS.shard, src);
  const connection = connectionFrom(src, shard ? parseShard(shard.value) : undefined);
  const planning = planningFrom(src);
  const profile = profileRef(src);
  return { ...(profile ? { profile } : {}), connection, planning, output: outputFrom(src, connection.insecureHttp) };
}

/** The fields of `run.started` that say where the run goes and what it plans. */
export function runFields(run: RunSettings): Record<string, string> {
  return {
    base_url: run.connection.baseUrl,
    ...(run.profile ? { profile: run.profile.name } : {}),
    ...(run.planning.shard ? { shard: shardLabel(run.planning.shard) } : {}),
    ...(run.planning.changedSince ? { changed_since: run.planning.changedSince } : {}),
  };
}

/** The IO of a verb that talks to the service: stderr logger scrubbing the key this run resolved (a profile's too). */
export function serviceIO(command: Command, connection: ConnectionSettings): CommandIO {
  return withLogger(processIO(), commandLogger(command, process.env, undefined, [connection.apiKey]));
}

/** Connection settings and the profile behind them, for the verbs that need no planning (workflows, describe, …). */
export function connectionRun(opts: Record<string, unknown>, env: Record<string, string | undefined>): { connection: ConnectionSettings; fields: Record<string, string> } {
  const src = sourcesOf(opts, env);
  const connection = connectionFrom(src);
  return { connection, fields: { base_url: connection.baseUrl, ...(src.profile ? { profile: src.profile.name } : {}) } };
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
 * The workflow catalog and the service URL a verb without a connection uses (validate, test, pull's file): flag, then
 * the profile; the URL from FLOWRULES_BASE_URL or the profile, to check the catalog was pulled from that service.
 */
export function catalogSettings(opts: Record<string, unknown>, env: Record<string, string | undefined>): { workflows?: string; baseUrl?: string } {
  const src = sourcesOf(opts, env);
  const workflows = pathOf(pick(PLANNING_FLAGS.workflows, src), src);
  const base = pick(CONNECTION_FLAGS.baseUrl, src);
  return { ...(workflows !== undefined ? { workflows } : {}), ...(typeof base?.value === "string" ? { baseUrl: base.value } : {}) };
}
