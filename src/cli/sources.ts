/**
 * The sources of a run's settings (flags, environment, the chosen profile) and the first that gives a setting, for
 * ./settings.ts, which turns them into typed settings. Apart from it (and its zod schemas) so that `validate` reads
 * its two settings without loading them when no config file or profile is in play (docs/performance.md, "Start-up").
 */
import { resolve } from "node:path";
import { configFileChoice, noConfigFile, profileAsked, type ConfigFileChoice } from "./config-choice.js";
import { CONNECTION_FLAGS, PLANNING_FLAGS, type SettingSource } from "./flags.js";
import type { LoadedProfile } from "./profiles.js";
import { defined } from "../model/defined.js";

/** flags and environment of one run, the config file in effect and the profile they chose */
export interface Sources {
  opts: Record<string, unknown>;
  env: Record<string, string | undefined>;
  /** the config file read, or the one that would be (a watcher watches it appear) */
  config: ConfigFileChoice;
  profile?: LoadedProfile;
}

/** commander's key of a flag: "--rate-limit <n>" → "rateLimit" */
function attr(flags: string): string {
  const long = /--([a-z0-9-]+)/.exec(flags)?.[1] ?? "";
  return long.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export interface Picked {
  value: unknown;
  /** the source in words, for messages: "--rate-limit", the variable's name, "flowrules.config.yaml:7:17: rate_limit of profile prod" */
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
    if (v !== undefined && !(Array.isArray(v) && v.length === 0))
      return { value: v, from: s.flags.split(" ")[0] ?? s.flags, kind: "flag" };
  }
  if (s.env) {
    const v = src.env[s.env];
    if (v !== undefined && (v !== "" || s.emptyEnvIsValue === true)) return { value: v, from: s.env, kind: "env" };
  }
  if (s.profile && src.profile) {
    const v = src.profile.values[s.profile];
    const where = src.profile.at[s.profile] ?? src.profile.file;
    if (v !== undefined)
      return { value: v, from: `${where}: ${s.profile} of profile ${src.profile.name}`, kind: "profile" };
  }
  return undefined;
}

/** A path from a profile resolves against the profile file's folder; from a flag or variable, against cwd. */
export function pathOf(p: Picked | undefined, src: Sources): string | undefined {
  if (p === undefined || typeof p.value !== "string") return undefined;
  return p.kind === "profile" && src.profile ? resolve(src.profile.dir, p.value) : p.value;
}

/** The sources of a run that has no config file and names no profile (what ./settings.ts sourcesOf answers then), else undefined. */
export function sourcesWithoutProfile(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): Sources | undefined {
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const config = configFileChoice({ config: str(opts.config) }, env, cwd);
  return noConfigFile(config) && profileAsked({ profile: str(opts.profile) }, env).asked === undefined
    ? { opts, env, config }
    : undefined;
}

/** The workflow catalog and the service it must come from (validate, test, init). */
export function catalogSettingsFrom(src: Sources): { workflows?: string; baseUrl?: string } {
  const workflows = pathOf(pick(PLANNING_FLAGS.workflows, src), src);
  const base = pick(CONNECTION_FLAGS.baseUrl, src);
  return {
    ...defined({ workflows }),
    ...(typeof base?.value === "string" ? { baseUrl: base.value } : {}),
  };
}
