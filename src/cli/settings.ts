/**
 * The one place where flags, environment and profiles become the typed settings of a run (src/model/settings.ts).
 * Each setting is looked up in the order of docs/operating.md (Profiles) — flag > environment variable > profile > default — and
 * each source is named in the message when its value is wrong. The sources are the tables of ./flags.ts, which
 * `--help` prints, so a flag's help always names the variable it falls back to.
 *
 * Adding a flag (CONTRIBUTING.md, "Adding a flag"): a field in the settings schema (PlanningSettingsSchema,
 * ApplyingSettingsSchema, WatchSettingsSchema), its line in the table of ./flags.ts (PLANNING_FLAGS, APPLYING_FLAGS,
 * WATCH_FLAGS: what `--help` shows) and in the readers below (PLANNING_READS, APPLYING_READS, WATCH_READS; the
 * compiler asks for both), and its use. `plan` and `apply --auto-approve` both register PLANNING_FLAGS and pass
 * `planning` whole, so they accept it and plan alike. `flowrules config` shows what these readers resolve, with the
 * sources (configReport). This module loads when a verb runs, never for `--help` or a completion Tab.
 */
import type { Command } from "commander";
import { z } from "zod";
import { InsecureUrlError } from "../api/errors.js";
import { isLoopbackHost, maskUserinfo } from "../api/url-guard.js";
import { UserError } from "../model/errors.js";
import { sameService } from "../model/service.js";
import {
  ApplyingSettingsSchema,
  ConnectionSettingsSchema,
  DEFAULT_API_KEY_ENV,
  DEFAULT_BATCH_SIZE,
  DEFAULT_CLOCK_SKEW_MS,
  MAX_CLOCK_SKEW_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_LOCK_FILE,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_OPT_OUT_TAG,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RECHECK_EVERY_MS,
  DEFAULT_TIMEOUT_MS,
  MAX_BATCH_SIZE,
  OutputSettingsSchema,
  PlanningSettingsSchema,
  WatchSettingsSchema,
  type ApplyingSettings,
  type ConnectionSettings,
  type OutputSettings,
  type PlanningSettings,
  type ProfileRef,
  type WatchSettings,
  sendRatePerMin,
} from "../model/settings.js";
import { durationText, readDuration } from "../text/duration.js";
import { DEFAULT_BUDGET_PERCENT } from "../watch/settings.js";
import { notifyUrls, parseNotifyUrl } from "../notify/urls.js";
import { parseShard, shardLabel, type Shard } from "../plan/shard.js";
import { tagProblem } from "../rules/operations.js";
import { plainDecimal } from "./plain-decimal.js";
import { apiKeyProblem } from "../api/key-check.js";
import { loadProfile } from "./profiles.js";
import { configFileChoice } from "./config-choice.js";
import { catalogSettingsFrom, pathOf, pick, type Picked, type Sources } from "./sources.js";
import { APPLYING_FLAGS, CONFIG_ENV, CONNECTION_FLAGS, OUTPUT_FLAGS, PLANNING_FLAGS, WATCH_FLAGS, colorOf, type SettingSource } from "./flags.js";
import type { ConfigReport, ConfigSetting } from "../render/config/types.js";
import { processIO, type CommandIO } from "../log/command-io.js";
import { commandLogger, withLogger } from "../log/index.js";

const Strings = z.array(z.string());

/** How the value picked for each setting of a table (or none) becomes the setting: one line per line of its flags. */
type Reads<S> = { [K in keyof S]-?: (picked: Picked | undefined, src: Sources) => S[K] | undefined };

/** How the value picked for a planning setting (or none) becomes the setting: one line per line of PLANNING_FLAGS. */
export const PLANNING_READS: Reads<PlanningSettings> = {
  rules: (p) => Strings.parse(p?.value ?? []),
  shard: (p) => (p ? parseShard(p.value) : undefined),
  changedSince: (p) => (typeof p?.value === "string" ? p.value : undefined),
  explainRequests: (p) => p?.value === true,
  optOutTag: (p) => optOutTagOf(p),
  // a path from a profile is the profile file's
  workflows: (p, src) => pathOf(p, src),
  state: (p, src) => pathOf(p, src),
  resyncAfterMs: (p) => durationOf(p, { min: 1000 }),
  fullRefresh: (p) => p?.value === true,
};

/** How `apply`'s settings are read: one line per line of APPLYING_FLAGS. */
export const APPLYING_READS: Reads<ApplyingSettings> = {
  autoApprove: (p) => p?.value === true,
  journal: (p) => textOf(p),
  batchSize: (p) => wholeNumber(p, 1, MAX_BATCH_SIZE) ?? DEFAULT_BATCH_SIZE,
  lockFile: (p) => textOf(p) ?? DEFAULT_LOCK_FILE,
  lockTimeoutMs: (p) => durationOf(p, { min: 1000 }) ?? DEFAULT_LOCK_TIMEOUT_MS,
  // a margin of clocks, not a wait: more than a day is no skew (99999999d sent the year -271764)
  clockSkewMs: (p) => durationOf(p, { max: MAX_CLOCK_SKEW_MS }) ?? DEFAULT_CLOCK_SKEW_MS,
  // the contract writes `--recheck-every SECONDS` (docs/operating.md): a bare number stays seconds there, for compatibility
  recheckEveryMs: (p) => durationOf(p, { bare: "s", min: 1000 }) ?? DEFAULT_RECHECK_EVERY_MS,
  maxDurationMs: (p) => durationOf(p),
  lockWaitMs: (p) => durationOf(p),
};

/** How `watch`'s own settings are read: one line per line of WATCH_FLAGS. */
export const WATCH_READS: Reads<WatchSettings> = {
  apply: (p) => p?.value === true,
  // its floor depends on the environment (a test-only variable lowers it): checked in ./run/watch.ts
  intervalMs: (p) => durationOf(p),
  budgetPercent: (p) => percentOf(p) ?? DEFAULT_BUDGET_PERCENT,
  metricsPort: (p) => wholeNumber(p, 0, 65535),
  metricsHost: (p) => textOf(p) ?? "127.0.0.1",
};

/** Every setting of a table, read from its sources (the fields left undefined are absent). */
function settingsOf<S>(flags: { [K in keyof S]-?: SettingSource }, reads: Reads<S>, src: Sources): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const key of Object.keys(reads) as Array<keyof S & string>) {
    const value: unknown = reads[key](pick(flags[key], src), src);
    if (value !== undefined) values[key] = value;
  }
  return values;
}

/** The profile of this run (none when no file or no name), from --config/--profile and their variables. */
export function sourcesOf(opts: Record<string, unknown>, env: Record<string, string | undefined>, cwd = process.cwd()): Sources {
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const config = configFileChoice({ config: str(opts.config) }, env, cwd);
  const profile = loadProfile({ config: str(opts.config), profile: str(opts.profile) }, env, cwd, config);
  return { opts, env, config, ...(profile ? { profile } : {}) };
}

function profileRef(src: Sources): ProfileRef | undefined {
  return src.profile ? { name: src.profile.name, file: src.profile.file } : undefined;
}

/** The one reader of whole-number settings (flags, variables, profile keys): plain digits within [min, max]. */
function wholeNumber(p: Picked | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (p === undefined) return undefined;
  // plain decimal digits only: Number() would also take "0x10", "1e3" and ""
  const n = typeof p.value === "number" ? p.value : plainDecimal(String(p.value));
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new UserError(`${p.from} must be a whole number ${range}, got ${JSON.stringify(p.value)}`);
  }
  return n;
}

/** The one reader of duration settings (src/text/duration.ts): a number and a unit; a bare number only where `bare` says. */
function durationOf(p: Picked | undefined, opts: { bare?: "s"; min?: number; max?: number } = {}): number | undefined {
  if (p === undefined) return undefined;
  const read = readDuration(String(p.value), opts);
  if (!read.ok) throw new UserError(`${p.from} ${read.problem}`);
  return read.ms;
}

/** A share in percent, above 0 and at most 100 ("20" or "20%"). */
function percentOf(p: Picked | undefined): number | undefined {
  if (p === undefined) return undefined;
  const text = String(p.value).trim().replace(/%$/, "");
  const n = text === "" ? Number.NaN : Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 100) throw new UserError(`${p.from} must be a percentage above 0 and at most 100, got ${JSON.stringify(p.value)}`);
  return n;
}

const textOf = (p: Picked | undefined): string | undefined => (typeof p?.value === "string" ? p.value : undefined);

/** Every API key this process resolved: scrubbed from logs and from the last-resort error line (src/cli/index.ts). */
const resolvedKeys = new Set<string>();
export function runSecrets(): string[] {
  return [...resolvedKeys];
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
    const named = own === undefined ? "names no base_url" : `names ${maskUserinfo(own)}`;
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

/** The service URL picked (flag, variable, profile), checked: http(s), and plain http only to loopback or with --insecure-http. */
function baseUrlOf(src: Sources): { base: Picked | undefined; baseUrl: string } {
  const base = pick(CONNECTION_FLAGS.baseUrl, src);
  const baseUrl = typeof base?.value === "string" ? base.value : undefined;
  if (!baseUrl) {
    throw new UserError("no service URL: pass --base-url, set FLOWRULES_BASE_URL or choose a profile with a base_url (e.g. http://127.0.0.1:4010/api for `flowrules sandbox`)");
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("protocol");
  } catch {
    throw new UserError(`${base?.from ?? "--base-url"} is not an http(s) URL: ${JSON.stringify(maskUserinfo(baseUrl))}`);
  }
  // refused before any message could echo it: the key has its own variable, and a URL is shown in plans and logs
  if (url.username || url.password) {
    throw new UserError(`${base?.from ?? "--base-url"} ${maskUserinfo(baseUrl)}: a service URL must not carry a user name or password; the API key goes in ${DEFAULT_API_KEY_ENV} or a profile's api_key_env`);
  }
  // refused here, before any rule or plan file is read and long before a socket could open (the client checks too)
  if (src.opts.insecureHttp !== true && url.protocol === "http:" && !isLoopbackHost(url.hostname)) throw new UserError(new InsecureUrlError(url.host, "--insecure-http").message);
  return { base, baseUrl };
}

/** The client-side rate limit picked, and the value in effect (the default when none is given). */
function rateLimitOf(src: Sources): { rate: Picked | undefined; perMin: number } {
  const rate = pick(CONNECTION_FLAGS.rateLimit, src);
  return { rate, perMin: wholeNumber(rate, 0) ?? DEFAULT_RATE_LIMIT };
}

/**
 * Connection settings, or a UserError that says what to set. The rate budget is per API key, and `--shard i/n`
 * workers share one key: when the limit comes from the default or a profile (the tenant's budget), each worker takes
 * 1/n of it, so together they stay within it; a limit from a flag or variable is each worker's own (a key per worker).
 */
export function connectionFrom(src: Sources, shard?: Shard): ConnectionSettings {
  const C = CONNECTION_FLAGS;
  const { base, baseUrl } = baseUrlOf(src);
  const { rate, perMin } = rateLimitOf(src);
  const concurrency = wholeNumber(pick(C.concurrency, src), 1) ?? DEFAULT_CONCURRENCY;
  const timeoutMs = durationOf(pick(C.timeout, src), { min: 1 }) ?? DEFAULT_TIMEOUT_MS;
  const { apiKey, keySource } = apiKeyOf(src, base, baseUrl);
  resolvedKeys.add(apiKey);
  // characters a header cannot carry are refused here, naming where the key came from, before any rule file or request
  const keyProblem = apiKeyProblem(apiKey, keySource);
  if (keyProblem) throw new UserError(keyProblem);
  const shared = rate === undefined || rate.kind === "profile";
  return ConnectionSettingsSchema.parse({
    baseUrl,
    apiKey,
    keySource,
    rateLimitPerMin: shard && shared ? perMin / shard.count : perMin,
    concurrency,
    timeoutMs,
    insecureHttp: src.opts.insecureHttp === true,
  });
}

/** A source as `flowrules config` names it: "--rate-limit", "FLOWRULES_RATE_LIMIT", "profile 'prod' (file:7:17)". */
function sourceWords(p: Picked | undefined, s: SettingSource, src: Sources): string {
  if (p === undefined) return "default";
  if (p.kind !== "profile" || !src.profile || !s.profile) return p.from;
  return `profile '${src.profile.name}' (${src.profile.at[s.profile] ?? src.profile.file})`;
}

/**
 * Where the API key comes from, in `flowrules config`'s words ("FLOWRULES_API_KEY", "profile 'staging' (api_key_env
 * STAGING_KEY)"), never its value; unset, or refused by a run's own rules (a profile's key asked for another URL, a
 * character a header cannot carry), in words.
 */
function keyFromWords(src: Sources): { from: string; problem?: string } {
  const profile = src.profile;
  const keyEnv = profile?.values.api_key_env;
  const viaProfile = profile !== undefined && keyEnv !== undefined && keyEnv !== DEFAULT_API_KEY_ENV && !src.env[DEFAULT_API_KEY_ENV];
  if (!viaProfile) {
    const key = src.env[DEFAULT_API_KEY_ENV];
    if (!key) return { from: `not set: set ${DEFAULT_API_KEY_ENV}, or choose a profile whose api_key_env names the variable holding it` };
    const problem = apiKeyProblem(key, `the API key in ${DEFAULT_API_KEY_ENV}`);
    return { from: DEFAULT_API_KEY_ENV, ...(problem ? { problem } : {}) };
  }
  const from = `profile '${profile.name}' (api_key_env ${keyEnv})`;
  if (!src.env[keyEnv]) return { from: `not set: ${from} names ${keyEnv}, which is not set` };
  let url: { base: Picked | undefined; baseUrl: string };
  try {
    url = baseUrlOf(src);
  } catch {
    // the URL's own line says what is wrong with it
    return { from };
  }
  try {
    const { apiKey, keySource } = apiKeyOf(src, url.base, url.baseUrl);
    const problem = apiKeyProblem(apiKey, keySource);
    return { from, ...(problem ? { problem } : {}) };
  } catch (err) {
    if (err instanceof UserError) return { from, problem: err.message };
    throw err;
  }
}

/** A webhook as `flowrules config` shows it: its host only (a webhook's path often holds its secret). */
const hostOf = (u: URL): string => u.host;

/**
 * `flowrules config`: every setting a run would use, with its value and source, read by the same readers as a run (a
 * value a run would refuse is shown with the run's words). The API key only as the name of its source.
 */
export function configReport(opts: Record<string, unknown>, env: Record<string, string | undefined>, cwd = process.cwd()): ConfigReport {
  const src = sourcesOf(opts, env, cwd);
  const C = CONNECTION_FLAGS;
  const P = PLANNING_FLAGS;
  const settings: ConfigSetting[] = [];
  const row = (setting: string, s: SettingSource | undefined, read: (p: Picked | undefined) => string | null): void => {
    const p = s ? pick(s, src) : undefined;
    const source = s ? sourceWords(p, s, src) : "default";
    try {
      settings.push({ setting, value: read(p), source });
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      settings.push({ setting, value: null, source, problem: err.message });
    }
  };
  const base = pick(C.baseUrl, src);
  if (base === undefined) settings.push({ setting: "base url", value: null, source: "not set (--base-url, FLOWRULES_BASE_URL or a profile's base_url)" });
  else row("base url", C.baseUrl, () => baseUrlOf(src).baseUrl);
  const key = keyFromWords(src);
  settings.push({ setting: "api key", value: null, source: key.from, ...(key.problem ? { problem: key.problem } : {}) });
  row("rate limit", C.rateLimit, () => {
    const n = rateLimitOf(src).perMin;
    return n === 0 ? "0: no client-side limit" : `${n} a minute (the client sends at most ${sendRatePerMin(n)} in any 60 s)`;
  });
  row("concurrency", C.concurrency, (p) => String(wholeNumber(p, 1) ?? DEFAULT_CONCURRENCY));
  row("timeout", C.timeout, (p) => durationText(durationOf(p, { min: 1 }) ?? DEFAULT_TIMEOUT_MS));
  row("insecure http", C.insecureHttp, (p) => (p?.value === true ? "allowed" : "plain http:// only to loopback"));
  row("opt-out tag", P.optOutTag, (p) => optOutTagOf(p) ?? "none (turned off)");
  row("workflows", P.workflows, (p) => pathOf(p, src) ?? "flowrules.workflows.json, when present");
  row("state", P.state, (p) => pathOf(p, src) ?? "none: every run reads afresh");
  row("notify", OUTPUT_FLAGS.notify, () => {
    const urls = notifyFrom(src, src.opts.insecureHttp === true);
    return urls.length === 0 ? "none" : urls.map(hostOf).join(", ");
  });
  const file = src.config;
  const fileSource = { "--config": "--config", [CONFIG_ENV]: CONFIG_ENV, found: "the nearest in this folder or its parents, up to the repository root", none: "none in this folder or its parents, up to the repository root" }[file.from];
  const profile = src.profile;
  return {
    config_file: { path: file.from === "none" ? null : file.shown, source: fileSource },
    profile: profile ? { name: profile.name, source: profile.chosenBy === "default_profile" ? `default_profile of ${profile.file}` : profile.chosenBy } : null,
    settings,
  };
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

/** What to plan, the same for `plan`, `apply --auto-approve` and `watch`: every line of PLANNING_FLAGS. */
export function planningFrom(src: Sources): PlanningSettings {
  return PlanningSettingsSchema.parse(settingsOf(PLANNING_FLAGS, PLANNING_READS, src));
}

/** How `apply` applies: every line of APPLYING_FLAGS. */
export function applyingFrom(src: Sources): ApplyingSettings {
  return ApplyingSettingsSchema.parse(settingsOf(APPLYING_FLAGS, APPLYING_READS, src));
}

/** How `watch` runs its cycles: every line of WATCH_FLAGS. */
export function watchingFrom(src: Sources): WatchSettings {
  return WatchSettingsSchema.parse(settingsOf(WATCH_FLAGS, WATCH_READS, src));
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
  return runSettingsOf(sourcesOf(opts, env, cwd));
}

/** The same, from sources already read (a verb that reads its own table from them too: apply, watch). */
export function runSettingsOf(src: Sources): RunSettings {
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
  return withLogger(processIO(colorOf(command)), commandLogger(command, process.env, undefined, [connection.apiKey]));
}

/** Connection settings and the profile behind them, for the verbs that need no planning (workflows, describe, …). */
export function connectionRun(opts: Record<string, unknown>, env: Record<string, string | undefined>): { connection: ConnectionSettings; fields: Record<string, string> } {
  const src = sourcesOf(opts, env);
  const connection = connectionFrom(src);
  return { connection, fields: { base_url: connection.baseUrl, ...(src.profile ? { profile: src.profile.name } : {}) } };
}

/**
 * The workflow catalog and the service URL a verb without a connection uses (validate, test, pull's file): flag, then
 * the profile; the URL from FLOWRULES_BASE_URL or the profile, to check the catalog was pulled from that service.
 */
export function catalogSettings(opts: Record<string, unknown>, env: Record<string, string | undefined>): { workflows?: string; baseUrl?: string } {
  return catalogSettingsFrom(sourcesOf(opts, env));
}

/** Connection settings from flags, environment and the chosen profile. */
export function connectionSettings(opts: Record<string, unknown>, env: Record<string, string | undefined>, shard?: Shard): ConnectionSettings {
  return connectionFrom(sourcesOf(opts, env), shard);
}

/** The opt-out tag in effect: the flag, else the environment, else the profile, else the default; empty turns it off. */
export function optOutTag(opts: Record<string, unknown>, env: Record<string, string | undefined>): string | undefined {
  return optOutTagFrom(sourcesOf(opts, env));
}
