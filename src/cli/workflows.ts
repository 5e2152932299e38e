/** `flowrules workflows` and `flowrules describe`: what the API key sees, and one workflow's steps and fields. */
import { Option, type Command } from "commander";
import { DESCRIBE_FORMAT_NAMES, WORKFLOWS_FORMAT_NAMES } from "../render/format-names.js";
import { addConnectionOptions } from "./connection.js";

export function registerWorkflows(program: Command): void {
  const cmd = program
    .command("workflows")
    .description("list the workflows this API key sees: id, name, folder")
    .addOption(new Option("--format <format>", "output format").choices(WORKFLOWS_FORMAT_NAMES).default("text"));
  addConnectionOptions(cmd).action(async (opts: Record<string, unknown>, command: Command) => (await import("./run/workflows.js")).workflows(opts, command));
}

export function registerDescribe(program: Command): void {
  const cmd = program
    .command("describe")
    .description("show a workflow's steps in order with their form fields (ids, names, types, options)")
    .argument("<workflow>", "workflow id or name")
    .addOption(new Option("--format <format>", "output format").choices(DESCRIBE_FORMAT_NAMES).default("text"));
  addConnectionOptions(cmd).action(async (workflow: string, opts: Record<string, unknown>, command: Command) =>
    (await import("./run/workflows.js")).describe(workflow, opts, command),
  );
}
