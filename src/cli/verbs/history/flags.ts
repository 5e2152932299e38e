/**
 * `flowrules history`: its flags; what it does when it runs is ./run.ts, loaded then (the reading lives in
 * src/watch/history.ts; docs/watch.md, "History").
 */
import type { Command } from "commander";
import { HISTORY_FORMAT_NAMES } from "../../../render/format-names.js";
import { DEFAULT_HISTORY_CYCLES } from "../../../model/defaults.js";
import { addOptions, CONNECTION_FLAGS, formatOption, PLANNING_FLAGS } from "../../flags.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerHistory(program: Command): void {
  const cmd = verbCommand(program, "history", {
    description:
      "list the changes of a watcher's last cycles (time, rule, instance, kind, outcome) from their journals, without any request",
  })
    .option(
      "--last <n>",
      `the last N cycles that applied something, failed or held rules back (default ${DEFAULT_HISTORY_CYCLES})`,
    )
    .option("--rule <name>", "only the cycles that concern this rule (its changes, held back, its errors)")
    .option("--instance <id>", "only the cycles that changed this instance, or whose errors name it")
    .option(
      "--since <time>",
      "of those, only the cycles started at or after this time: ISO 8601 (2026-11-25T13:00Z) or a duration ago (90m, 2h, 7d)",
    )
    .addOption(formatOption(HISTORY_FORMAT_NAMES, "output format: text, or json (schemas/history.schema.json)"));
  // the watcher's --state, from the flag, its variable or the profile, as `watch` reads it
  addOptions(
    cmd,
    { state: PLANNING_FLAGS.state, profile: CONNECTION_FLAGS.profile, config: CONNECTION_FLAGS.config },
    { state: "the watcher's state dir" },
  );
  defineVerb(cmd, () => import("./run.js"));
}
