/** `flowrules validate [paths...]`: schema, JSONata, aliases, names and conflicts, without any request. */
import type { Command } from "commander";
import { DIAGNOSTIC_FORMAT_NAMES } from "../../../render/format-names.js";
import { addProfileOptions, workflowsOption } from "../../flags.js";
import { defineVerb, RULE_PATHS, verbCommand } from "../define.js";

export function registerValidate(program: Command): void {
  const cmd = verbCommand(program, "validate", {
    description: "check rule files (schema, JSONata, aliases, names, conflicts) without any request",
    argument: RULE_PATHS,
    format: DIAGNOSTIC_FORMAT_NAMES,
  }).addOption(
    workflowsOption("workflow catalog to check steps, fields and values against (default flowrules.workflows.json)"),
  );
  defineVerb(addProfileOptions(cmd), () => import("./run.js"));
}
