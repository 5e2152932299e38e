/** `flowrules workflows`: the workflows the API key sees. Its flags; what it does is ./run.ts, loaded when it runs. */
import { Option, type Command } from "commander";
import { WORKFLOWS_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { defineVerb } from "../define.js";

export function registerWorkflows(program: Command): void {
  const cmd = program
    .command("workflows")
    .description("list the workflows this API key sees: id, name, folder")
    .addOption(new Option("--format <format>", "output format").choices(WORKFLOWS_FORMAT_NAMES).default("text"));
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
