/** `flowrules workflows`: the workflows the API key sees. Its flags; what it does is ./run.ts, loaded when it runs. */
import type { Command } from "commander";
import { WORKFLOWS_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerWorkflows(program: Command): void {
  const cmd = verbCommand(program, "workflows", {
    description: "list the workflows this API key sees: id, name, folder",
    format: WORKFLOWS_FORMAT_NAMES,
  });
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
