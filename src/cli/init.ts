/** `flowrules init` and `flowrules pull`: starter files for workflows, and the workflow catalog. */
import type { Command } from "commander";
import { addConnectionOptions } from "./connection.js";
import { collect, workflowsOption } from "./flags.js";

export function registerInit(program: Command): void {
  const cmd = program
    .command("init")
    .description("write a starter rule file and test file per workflow (never overwrites)")
    .argument("[dir]", "folder to write into", "rules")
    .option("--workflow <id-or-name>", "a workflow to start from (repeatable; default: every workflow the key sees)", collect, []);
  addConnectionOptions(cmd).action(async (dir: string, opts: Record<string, unknown>, command: Command) => (await import("./run/init.js")).init(dir, opts, command));
}

export function registerPull(program: Command): void {
  const cmd = program
    .command("pull")
    .description("write the workflow catalog flowrules.workflows.json for the workflows the rules name")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .addOption(workflowsOption("write the catalog to this file instead of flowrules.workflows.json"));
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>, command: Command) => (await import("./run/init.js")).pull(paths, opts, command));
}
