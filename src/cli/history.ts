/**
 * `flowrules history`: its flags; what it does when it runs is ./run/history.ts, loaded then (the reading lives in
 * src/watch/history.ts; docs/watch.md, "History").
 */
import { Option, type Command } from "commander";
import { HISTORY_FORMAT_NAMES } from "../render/format-names.js";
import { DEFAULT_HISTORY_CYCLES } from "../model/defaults.js";
import { addOptions, CONNECTION_FLAGS, PLANNING_FLAGS } from "./flags.js";

export function registerHistory(program: Command): void {
  const cmd = program
    .command("history")
    .description("list the changes of a watcher's last cycles (time, rule, instance, kind, outcome) from their journals, without any request")
    .option("--last <n>", `the last N cycles that applied something, failed or held rules back (default ${DEFAULT_HISTORY_CYCLES})`)
    .option("--rule <name>", "only the cycles that concern this rule (its changes, held back, its errors)")
    .option("--instance <id>", "only the cycles that changed this instance, or whose errors name it")
    .addOption(new Option("--format <format>", "output format: text, or json (schemas/history.schema.json)").choices(HISTORY_FORMAT_NAMES).default("text"));
  // the watcher's --state, from the flag, FLOWRULES_STATE or the profile, as `watch` reads it
  addOptions(cmd, { state: PLANNING_FLAGS.state, profile: CONNECTION_FLAGS.profile, config: CONNECTION_FLAGS.config }, { state: "the watcher's state dir" });
  cmd.action(async (raw: Record<string, unknown>, command: Command) => (await import("./run/history.js")).history(raw, command));
}
