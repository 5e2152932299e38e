/** Flags shared by `plan`, `apply` and `explain` for running rules in production: the opt-out tag and webhooks. */
import type { Command } from "commander";
import { OUTPUT_FLAGS, PLANNING_FLAGS, optionOf, optOutTagFrom, sourcesOf } from "./settings.js";

export function addOptOutOption(cmd: Command): Command {
  return cmd.addOption(optionOf(PLANNING_FLAGS.optOutTag));
}

export function addNotifyOption(cmd: Command): Command {
  return cmd.addOption(optionOf(OUTPUT_FLAGS.notify));
}

/** The opt-out tag in effect: the flag, else the environment, else the profile, else the default; empty turns it off. */
export function optOutTag(opts: Record<string, unknown>, env: Record<string, string | undefined>): string | undefined {
  return optOutTagFrom(sourcesOf(opts, env));
}
