/** `flowrules pull`: the workflow catalog the rules need. Its flags; what it does is ./run.ts, loaded when it runs. */
import type { Command } from "commander";
import { addConnectionOptions } from "../../connection.js";
import { workflowsOption } from "../../flags.js";
import { defineVerb, RULE_PATHS, verbCommand } from "../define.js";

export function registerPull(program: Command): void {
  const cmd = verbCommand(program, "pull", {
    description: "write the workflow catalog flowrules.workflows.json for the workflows the rules name",
    argument: RULE_PATHS,
  }).addOption(workflowsOption("write the catalog to this file instead of flowrules.workflows.json"));
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
