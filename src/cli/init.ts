/** `flowrules init` and `flowrules pull`: starter files for workflows, and the workflow catalog. */
import type { Command } from "commander";
import { runLogged } from "../log/index.js";
import { addConnectionOptions } from "./connection.js";
import { catalogSettings, connectionRun, serviceIO, workflowsOption } from "./settings.js";

const workflowsOf = (c: { workflows?: string }): { workflows?: string } => (c.workflows !== undefined ? { workflows: c.workflows } : {});

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function registerInit(program: Command): void {
  const cmd = program
    .command("init")
    .description("write a starter rule file and test file per workflow (never overwrites)")
    .argument("[dir]", "folder to write into", "rules")
    .option("--workflow <id-or-name>", "a workflow to start from (repeatable; default: every workflow the key sees)", collect, []);
  addConnectionOptions(cmd).action(async (dir: string, opts: Record<string, unknown>, command: Command) => {
    const { connection, fields } = connectionRun(opts, process.env);
    const io = serviceIO(command, connection);
    const workflows = (opts.workflow as string[] | undefined) ?? [];
    process.exitCode = await runLogged(io, "init", { dir, workflows, ...fields }, async (io) =>
      (await import("../commands/init.js")).initCommand({ dir, workflows, connection }, io),
    );
  });
}

export function registerPull(program: Command): void {
  const cmd = program
    .command("pull")
    .description("write the workflow catalog flowrules.workflows.json for the workflows the rules name")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .addOption(workflowsOption("write the catalog to this file instead of flowrules.workflows.json"));
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>, command: Command) => {
    const { connection, fields } = connectionRun(opts, process.env);
    const io = serviceIO(command, connection);
    process.exitCode = await runLogged(io, "pull", { paths, ...fields }, async (io) =>
      (await import("../commands/pull.js")).pullCommand({ paths, ...workflowsOf(catalogSettings(opts, process.env)), connection, ...(fields.profile ? { profile: fields.profile } : {}) }, io),
    );
  });
}
