/**
 * `flowrules config`: what the settings' readers (./settings.ts) resolve for a run, with the source of each value, in
 * the report's words. The readers are the run's own, so the report cannot disagree with a run.
 */
import { UserError } from "../model/errors.js";
import { sendRatePerMin } from "../model/settings.js";
import {
  CONNECTION_SETTINGS,
  ENV,
  OUTPUT_SETTINGS,
  PLANNING_SETTINGS,
  type SettingSource,
} from "../model/settings-table.js";
import { durationText } from "../text/duration.js";
import { readSetting, sourcesOf } from "./settings.js";
import { pick, type Picked, type Sources } from "./sources.js";
import { keyFromWords } from "./trust.js";
import type { ConfigReport, ConfigSetting } from "../render/config/types.js";

/** A source as `flowrules config` names it: "--rate-limit", the variable's name, "profile 'prod' (file:7:17)". */
function sourceWords(p: Picked | undefined, s: SettingSource, src: Sources): string {
  if (p === undefined) return "default";
  if (p.kind !== "profile" || !src.profile || !s.profile) return p.from;
  return `profile '${src.profile.name}' (${src.profile.at[s.profile] ?? src.profile.file})`;
}

/** A setting's value in `flowrules config`'s words, from its entry's row (on/off, none) and reader kind. */
function valueWords(s: SettingSource, value: unknown): string {
  const row = s.row;
  if (s.read?.kind === "switch") return value === true ? (row?.on ?? "on") : (row?.off ?? "off");
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return row?.none ?? "none";
  // a webhook as shown: its host only (a webhook's path often holds its secret)
  if (Array.isArray(value)) return value.map((u) => (u instanceof URL ? u.host : String(u))).join(", ");
  if (s === CONNECTION_SETTINGS.rateLimit && typeof value === "number") {
    return value === 0
      ? "0: no client-side limit"
      : `${value} a minute (the client sends at most ${sendRatePerMin(value)} in any 60 s)`;
  }
  if (s.read?.kind === "duration" && typeof value === "number") return durationText(value);
  return String(value);
}

/** The settings `flowrules config` shows: every entry of the table with a row, in the table's order. */
const REPORTED_GROUPS: ReadonlyArray<Record<string, SettingSource>> = [
  CONNECTION_SETTINGS,
  PLANNING_SETTINGS,
  OUTPUT_SETTINGS,
];
const REPORTED = REPORTED_GROUPS.flatMap((g) => Object.values(g)).filter((s) => s.row !== undefined);

/**
 * `flowrules config`: every setting a run would use, with its value and source, read by the same readers as a run (a
 * value a run would refuse is shown with the run's words). The API key only as the name of its source.
 */
export function configReport(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): ConfigReport {
  const src = sourcesOf(opts, env, cwd);
  const settings: ConfigSetting[] = [];
  for (const s of REPORTED) {
    const setting = s.row?.label ?? "";
    if (s === CONNECTION_SETTINGS.apiKey) {
      const key = keyFromWords(src);
      settings.push({ setting, value: null, source: key.from, ...(key.problem ? { problem: key.problem } : {}) });
      continue;
    }
    const p = pick(s, src);
    if (s.read?.kind === "url" && p === undefined) {
      settings.push({ setting, value: null, source: s.row?.none ?? "not set" });
      continue;
    }
    const source = sourceWords(p, s, src);
    try {
      settings.push({ setting, value: valueWords(s, readSetting(s, p, src)), source });
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      settings.push({ setting, value: null, source, problem: err.message });
    }
  }
  const file = src.config;
  const fileSource = {
    "--config": "--config",
    [ENV.config]: ENV.config,
    found: "the nearest in this folder or its parents, up to the repository root",
    none: "none in this folder or its parents, up to the repository root",
  }[file.from];
  const profile = src.profile;
  return {
    config_file: { path: file.from === "none" ? null : file.shown, source: fileSource },
    profile: profile
      ? {
          name: profile.name,
          source: profile.chosenBy === "default_profile" ? `default_profile of ${profile.file}` : profile.chosenBy,
        }
      : null,
    settings,
  };
}
