/** Flags shared by `plan`, `apply` and `explain` for running rules in production: the opt-out tag and webhooks. */
import type { Command } from "commander";
import { OUTPUT_FLAGS, PLANNING_FLAGS, optionOf } from "./flags.js";

export function addOptOutOption(cmd: Command): Command {
  return cmd.addOption(optionOf(PLANNING_FLAGS.optOutTag));
}

export function addNotifyOption(cmd: Command): Command {
  return cmd.addOption(optionOf(OUTPUT_FLAGS.notify));
}
