/** `flowrules init` and `flowrules pull`: starter files for workflows, and the workflow catalog. */
import type { Command } from "commander";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";
import { addConnectionOptions, connectionSettings } from "./connection.js";

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function registerInit(program: Command): void {
  const cmd = program
    .command("init")
    .description("write a starter rule file and test file per workflow (never overwrites)")
    .argument("[dir]", "folder to write into", "rules")
    .option("--workflow <id-or-name>", "a workflow to start from (repeatable; default: every workflow the key sees)", collect, []);
  addConnectionOptions(cmd).action(async (dir: string, opts: Record<string, unknown>, command: Command) => {
    const io = withLogger(processIO(), commandLogger(command));
    const connection = connectionSettings(opts, io.env);
    const workflows = (opts.workflow as string[] | undefined) ?? [];
    process.exitCode = await runLogged(io, "init", { dir, workflows, base_url: connection.baseUrl }, async (io) =>
      (await import("../commands/init.js")).initCommand({ dir, workflows, connection }, io),
    );
  });
}

export function registerPull(program: Command): void {
  const cmd = program
    .command("pull")
    .description("write the workflow catalog flowrules.workflows.json for the workflows the rules name")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .option("--workflows <file>", "write the catalog to this file instead of flowrules.workflows.json");
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>, command: Command) => {
    const io = withLogger(processIO(), commandLogger(command));
    const connection = connectionSettings(opts, io.env);
    process.exitCode = await runLogged(io, "pull", { paths, base_url: connection.baseUrl }, async (io) =>
      (await import("../commands/pull.js")).pullCommand({ paths, ...(typeof opts.workflows === "string" ? { workflows: opts.workflows } : {}), connection }, io),
    );
  });
}
