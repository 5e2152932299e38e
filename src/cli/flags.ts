/**
 * What a user can type: the flags of the settings every verb shares, their environment variables and profile keys,
 * and the helpers that register them on a command. `--help` and a completion Tab load this file, never
 * ./settings.ts (which turns what was typed into settings, with zod and the profile file's YAML), so it imports
 * nothing but commander and plain constants (docs/performance.md, "Start-up"; CONTRIBUTING.md, "Adding a flag").
 */
import { Option, type Command } from "commander";
import * as TABLE from "../model/settings-table.js";
import type { SettingSource } from "../model/settings-table.js";
import type { PlanningSettings } from "../model/settings.js";

export type { SettingSource } from "../model/settings-table.js";
export const CONFIG_ENV = TABLE.ENV.config;
export const PROFILE_ENV = TABLE.ENV.profile;

/** The groups of the settings table (src/model/settings-table.ts), under the names the verbs' declarations use. */
export const CONNECTION_FLAGS = TABLE.CONNECTION_SETTINGS;
export const PLANNING_FLAGS = TABLE.PLANNING_SETTINGS;
export const APPLYING_FLAGS = TABLE.APPLYING_SETTINGS;
export const WATCH_FLAGS = TABLE.WATCH_SETTINGS;
export const OUTPUT_FLAGS = TABLE.OUTPUT_SETTINGS;

/** The help text of a setting: what it does, then where else it may come from. */
function helpOf(s: SettingSource): string {
  const more = [s.env ? `env ${s.env}` : undefined, s.profile ? `profile ${s.profile}` : undefined].filter(
    (x) => x !== undefined,
  );
  if (more.length === 0) return s.help;
  // "… (default 100)" becomes "… (default 100; env X; profile y)": one parenthesis, not two
  return s.help.endsWith(")") ? `${s.help.slice(0, -1)}; ${more.join("; ")})` : `${s.help} (${more.join("; ")})`;
}

export const collect = (v: string, acc: string[]): string[] => [...acc, v];

/** A verb's `--format`: its choices (src/render/format-names.ts), text by default. */
export function formatOption(names: readonly string[], help = "output format"): Option {
  return new Option("--format <format>", help).choices(names).default("text");
}

/** The commander option of a setting (no default: defaults are applied in ./settings.ts, after env and profile). */
export function optionOf(s: SettingSource): Option {
  const o = new Option(s.flags ?? "", helpOf(s));
  if (s.repeatable) o.argParser(collect).default([]);
  return o;
}

/** Registers the flags of a table; `help` replaces a line's text for one verb (its env and profile still named). */
export function addOptions(
  cmd: Command,
  sources: Record<string, SettingSource>,
  help: Record<string, string> = {},
): Command {
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
