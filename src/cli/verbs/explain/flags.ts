/** `flowrules explain --instance ID`: its flags; what it does when it runs is ./run.ts, loaded then. */
import type { Command } from "commander";
import { EXPLAIN_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { collect, formatOption } from "../../flags.js";
import { addOptOutOption } from "../../operations.js";
import { defineVerb, RULE_PATHS, verbCommand } from "../define.js";

export function registerExplain(program: Command): void {
  const cmd = verbCommand(program, "explain", {
    description: "why one live instance matches each rule or not (GET only, never a change)",
    argument: RULE_PATHS,
  })
    .requiredOption("--instance <id>", "the instance to explain")
    .option(
      "--rule <name>",
      "explain only this rule; a glob such as 'approve-*' selects several (repeatable)",
      collect,
      [],
    )
    .addOption(formatOption(EXPLAIN_FORMAT_NAMES));
  addOptOutOption(cmd);
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
