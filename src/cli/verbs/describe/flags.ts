/** `flowrules describe <workflow>`: one workflow's steps and fields. Its flags; what it does is ./run.ts, loaded when it runs. */
import type { Command } from "commander";
import { DESCRIBE_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { defineVerb, verbCommand } from "../define.js";

export function registerDescribe(program: Command): void {
  const cmd = verbCommand(program, "describe", {
    description: "show a workflow's steps in order with their form fields (ids, names, types, options)",
    argument: ["<workflow>", "workflow id or name"],
    format: DESCRIBE_FORMAT_NAMES,
  });
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
