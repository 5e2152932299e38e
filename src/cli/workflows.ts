/** `flowrules workflows` and `flowrules describe`: what the API key sees, and one workflow's steps and fields. */
import { Option, type Command } from "commander";
import { runLogged } from "../log/index.js";
import type { WorkflowsFormat } from "../render/workflows/index.js";
import type { DescribeFormat } from "../render/describe/index.js";
import { addConnectionOptions } from "./connection.js";
import { connectionRun, serviceIO } from "./settings.js";

export function registerWorkflows(program: Command): void {
  const cmd = program
    .command("workflows")
    .description("list the workflows this API key sees: id, name, folder")
    .addOption(new Option("--format <format>", "output format").choices(["text", "json"]).default("text"));
  addConnectionOptions(cmd).action(async (opts: Record<string, unknown>, command: Command) => {
    const { connection, fields } = connectionRun(opts, process.env);
    const io = serviceIO(command, connection);
    process.exitCode = await runLogged(io, "workflows", { ...fields }, async (io) =>
      (await import("../commands/workflows.js")).workflowsCommand({ format: opts.format as WorkflowsFormat, connection }, io),
    );
  });
}

export function registerDescribe(program: Command): void {
  const cmd = program
    .command("describe")
    .description("show a workflow's steps in order with their form fields (ids, names, types, options)")
    .argument("<workflow>", "workflow id or name")
    .addOption(new Option("--format <format>", "output format").choices(["text", "json", "yaml"]).default("text"));
  addConnectionOptions(cmd).action(async (workflow: string, opts: Record<string, unknown>, command: Command) => {
    const { connection, fields } = connectionRun(opts, process.env);
    const io = serviceIO(command, connection);
    process.exitCode = await runLogged(io, "describe", { workflow, ...fields }, async (io) =>
      (await import("../commands/describe.js")).describeCommand({ workflow, format: opts.format as DescribeFormat, connection }, io),
    );
  });
}
