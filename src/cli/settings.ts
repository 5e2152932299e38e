/**
 * The one place where flags, environment and profiles become the typed settings of a run (src/model/settings.ts).
 * Each setting is looked up in the order of docs/operating.md (Profiles) — flag > environment variable > profile >
 * default — and each source is named in the message when its value is wrong. What a setting is (its flag, variable,
 * profile key, default, reader, help) is its entry in the one table, src/model/settings-table.ts; this module reads
 * every entry by its `read` kind, so adding a setting touches the table and the verb that uses it (CONTRIBUTING.md,
 * "Adding a flag"). Which URL and key a run trusts is ./trust.ts. `flowrules config` shows what these readers
 * resolve, with the sources (./config-report.ts). This module loads when a verb runs, never for `--help` or a Tab.
 */
import { dirname, resolve } from "node:path";
import { defined } from "../model/defined.js";
import { z } from "zod";
import { UserError } from "../model/errors.js";
import {
  ApplyingSettingsSchema,
  ConnectionSettingsSchema,
  OutputSettingsSchema,
  PlanningSettingsSchema,
  WatchSettingsSchema,
  type ApplyingSettings,
  type ConnectionSettings,
  type OutputSettings,
  type PlanningSettings,
  type ProfileRef,
  type WatchSettings,
} from "../model/settings.js";
import {
  APPLYING_SETTINGS,
  CONNECTION_SETTINGS,
  OUTPUT_SETTINGS,
  PLANNING_SETTINGS,
  WATCH_SETTINGS,
  type SettingSource,
} from "../model/settings-table.js";
import { readDuration } from "../text/duration.js";
import { notifyUrls, parseNotifyUrl } from "../notify/urls.js";
import { parseShard, shardLabel, type Shard } from "../plan/shard.js";
import { tagProblem } from "../rules/operations.js";
import { plainDecimal } from "./plain-decimal.js";
import { apiKeyProblem } from "../api/key-check.js";
import { loadProfile } from "./profiles.js";
import { configFileChoice } from "./config-choice.js";
import { catalogSettingsFrom, pathOf, pick, type Picked, type Sources } from "./sources.js";
import { apiKeyOf, baseUrlOf } from "./trust.js";

export { apiKeyFrom, runSecrets } from "./trust.js";

const Strings = z.array(z.string());

/**
 * The one reader: the value picked for a setting (or none) → the setting's value, by the entry's `read` kind, else
 * its default; undefined when neither.
 */
export function readSetting(s: SettingSource, p: Picked | undefined, src: Sources): unknown {
  const r = s.read;
  if (r === undefined) return p?.value ?? s.default;
  switch (r.kind) {
    case "switch":
      return p?.value === true;
    case "text":
    case "variable":
      return textOf(p) ?? s.default;
    case "texts":
      return Strings.parse(p?.value ?? []);
    // a path from a profile is the profile file's
    case "path":
      return pathOf(p, src);
    case "whole":
      return wholeNumber(p, r.min, r.max) ?? s.default;
    case "duration":
      return durationOf(p, r) ?? s.default;
    case "percent":
      return percentOf(p) ?? s.default;
    case "shard":
      return p ? parseShard(p.value) : undefined;
    case "tag":
      return optOutTagOf(p, s);
    case "url":
      return p === undefined ? undefined : baseUrlOf(src).baseUrl;
    case "urls":
      return notifyFrom(src, src.opts.insecureHttp === true);
  }
}

/** Every setting of a group of the table, read from its sources (the fields left undefined are absent). */
function settingsOf(table: Record<string, SettingSource>, src: Sources): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(table)) {
    const value = readSetting(s, pick(s, src), src);
    if (value !== undefined) values[key] = value;
  }
  return values;
}

/** A path setting alone (history's and state's --state). */
export function pathSetting(s: SettingSource, src: Sources): string | undefined {
  return pathOf(pick(s, src), src);
}

/** The profile of this run (none when no file or no name), from --config/--profile and their variables. */
export function sourcesOf(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): Sources {
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const config = configFileChoice({ config: str(opts.config) }, env, cwd);
  const profile = loadProfile({ config: str(opts.config), profile: str(opts.profile) }, env, cwd, config);
  if (profile && config.from === "found")
    nameFoundAbove(
      config.abs,
      profile.name,
      cwd,
      opts.logFormat === "json" ||
        process.argv.includes("--log-format=json") ||
        process.argv.join(" ").includes("--log-format json"),
    );
  return { opts, env, config, ...defined({ profile }) };
}

let namedAbove = false;
/**
 * A profile from a file found above the working directory (in a parent up to the repository root) is named before
 * anything else the run prints, once: a file nobody named on the command line is never used silently.
 */
function nameFoundAbove(file: string, profile: string, cwd: string, json: boolean): void {
  if (namedAbove || dirname(file) === resolve(cwd)) return;
  namedAbove = true;
  // with --log-format json every stderr line is a JSON event (src/log/json.ts), this one too
  if (json)
    return void process.stderr.write(
      `${JSON.stringify({ ts: new Date().toISOString(), level: "warn", event: "config.found_above", profile, file })}\n`,
    );
  process.stderr.write(
    `flowrules: using profile ${profile} from ${file} (found above the working directory; --config names another, explicit flags and variables win over it)\n`,
  );
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
  if (!Number.isFinite(n) || n <= 0 || n > 100)
    throw new UserError(`${p.from} must be a percentage above 0 and at most 100, got ${JSON.stringify(p.value)}`);
  return n;
}

const textOf = (p: Picked | undefined): string | undefined => (typeof p?.value === "string" ? p.value : undefined);

/** The client-side rate limit picked, and the value in effect (the default when none is given). */
function rateLimitOf(src: Sources): { rate: Picked | undefined; perMin: number } {
  const rate = pick(CONNECTION_SETTINGS.rateLimit, src);
  return { rate, perMin: wholeNumber(rate, 0) ?? CONNECTION_SETTINGS.rateLimit.default };
}

/**
 * Connection settings, or a UserError that says what to set. The rate budget is per API key, and `--shard i/n`
 * workers share one key: when the limit comes from the default or a profile (the tenant's budget), each worker takes
 * 1/n of it, so together they stay within it; a limit from a flag or variable is each worker's own (a key per worker).
 */
export function connectionFrom(src: Sources, shard?: Shard): ConnectionSettings {
  const C = CONNECTION_SETTINGS;
  const { base, baseUrl } = baseUrlOf(src);
  const { rate, perMin } = rateLimitOf(src);
  const { apiKey, keySource } = apiKeyOf(src, base, baseUrl);
  // characters a header cannot carry are refused here, naming where the key came from, before any rule file or request
  const keyProblem = apiKeyProblem(apiKey, keySource);
  if (keyProblem) throw new UserError(keyProblem);
  const shared = rate === undefined || rate.kind === "profile";
  return ConnectionSettingsSchema.parse({
    baseUrl,
    apiKey,
    keySource,
    rateLimitPerMin: shard && shared ? perMin / shard.count : perMin,
    concurrency: readSetting(C.concurrency, pick(C.concurrency, src), src),
    timeoutMs: readSetting(C.timeout, pick(C.timeout, src), src),
    insecureHttp: src.opts.insecureHttp === true,
  });
}

/** The opt-out tag in effect from the value picked (flag, environment, profile), else the default; empty turns it off. */
function optOutTagOf(p: Picked | undefined, s: SettingSource = PLANNING_SETTINGS.optOutTag): string | undefined {
  const raw = p === undefined ? String(s.default ?? "") : String(p.value);
  if (raw === "") return undefined;
  const problem = tagProblem(raw);
  if (problem) {
    throw new UserError(
      `${p?.from ?? "--opt-out-tag"} ${JSON.stringify(raw.slice(0, 80))}: ${problem}; give a tag as the product shows it, or "" to turn the opt-out off`,
    );
  }
  return raw;
}

/** The opt-out tag alone (explain has it without the rest of the planning). */
export function optOutTagFrom(src: Sources): string | undefined {
  return optOutTagOf(pick(PLANNING_SETTINGS.optOutTag, src));
}

/** What to plan, the same for `plan`, `apply --auto-approve` and `watch`: every entry of PLANNING_SETTINGS. */
export function planningFrom(src: Sources): PlanningSettings {
  return PlanningSettingsSchema.parse(settingsOf(PLANNING_SETTINGS, src));
}

/** How `apply` applies: every entry of APPLYING_SETTINGS. */
export function applyingFrom(src: Sources): ApplyingSettings {
  return ApplyingSettingsSchema.parse(settingsOf(APPLYING_SETTINGS, src));
}

/** How `watch` runs its cycles: every entry of WATCH_SETTINGS. */
export function watchingFrom(src: Sources): WatchSettings {
  return WatchSettingsSchema.parse(settingsOf(WATCH_SETTINGS, src));
}

/** Webhooks: the flag's URLs, else the variable's (comma-separated), else the profile's. */
function notifyFrom(src: Sources, insecureHttp: boolean): URL[] {
  const p = pick(OUTPUT_SETTINGS.notify, src);
  if (p === undefined) return [];
  if (p.kind === "flag") return notifyUrls(Strings.parse(p.value), "", insecureHttp);
  if (p.kind === "env") return notifyUrls([], String(p.value), insecureHttp);
  // a profile's single string may list several, comma-separated, as the variable does
  const list = (Array.isArray(p.value) ? Strings.parse(p.value) : String(p.value).split(","))
    .map((u) => u.trim())
    .filter((u) => u !== "");
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

export function runSettings(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): RunSettings {
  return runSettingsOf(sourcesOf(opts, env, cwd));
}

/** The same, from sources already read (a verb that reads its own table from them too: apply, watch). */
export function runSettingsOf(src: Sources): RunSettings {
  // the shard first (its share of the rate budget), then the connection, then the rest of the planning
  const shard = pick(PLANNING_SETTINGS.shard, src);
  const connection = connectionFrom(src, shard ? parseShard(shard.value) : undefined);
  const planning = planningFrom(src);
  const profile = profileRef(src);
  return { ...defined({ profile }), connection, planning, output: outputFrom(src, connection.insecureHttp) };
}

/** The fields of `run.started` that say where the run goes and what it plans. */
export function runFields(run: RunSettings): Record<string, string> {
  return {
    base_url: run.connection.baseUrl,
    ...defined({ profile: run.profile?.name, shard: run.planning.shard && shardLabel(run.planning.shard) }),
    ...(run.planning.changedSince ? { changed_since: run.planning.changedSince } : {}),
  };
}

/** Connection settings and the profile behind them, for the verbs that need no planning (workflows, describe, …). */
export function connectionRun(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
): { connection: ConnectionSettings; fields: Record<string, string> } {
  const src = sourcesOf(opts, env);
  const connection = connectionFrom(src);
  return {
    connection,
    fields: { base_url: connection.baseUrl, ...defined({ profile: src.profile?.name }) },
  };
}

/**
 * The workflow catalog and the service URL a verb without a connection uses (validate, test, pull's file): flag, then
 * the profile; the URL from the base URL's variable or the profile, to check the catalog was pulled from that service.
 */
export function catalogSettings(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
): { workflows?: string; baseUrl?: string } {
  return catalogSettingsFrom(sourcesOf(opts, env));
}

/** Connection settings from flags, environment and the chosen profile. */
export function connectionSettings(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  shard?: Shard,
): ConnectionSettings {
  return connectionFrom(sourcesOf(opts, env), shard);
}

/** The opt-out tag in effect: the flag, else the environment, else the profile, else the default; empty turns it off. */
export function optOutTag(opts: Record<string, unknown>, env: Record<string, string | undefined>): string | undefined {
  return optOutTagFrom(sourcesOf(opts, env));
}

/**
 * The part of `plan`'s and `apply`'s options that the settings give, whole: the planning settings, the profile,
 * the connection and the output (webhooks only when there are some).
 */
export function runOptions(run: RunSettings) {
  const { notify, ...output } = run.output;
  return {
    ...run.planning,
    profile: run.profile,
    connection: run.connection,
    ...output,
    notify: notify.length > 0 ? { urls: notify } : undefined,
  };
}
