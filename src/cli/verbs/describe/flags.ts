/** `flowrules describe <workflow>`: one workflow's steps and fields. Its flags; what it does is ./run.ts, loaded when it runs. */
import { Option, type Command } from "commander";
import { DESCRIBE_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { defineVerb } from "../define.js";

export function registerDescribe(program: Command): void {
  const cmd = program
    .command("describe")
    .description("show a workflow's steps in order with their form fields (ids, names, types, options)")
    .argument("<workflow>", "workflow id or name")
    .addOption(new Option("--format <format>", "output format").choices(DESCRIBE_FORMAT_NAMES).default("text"));
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
