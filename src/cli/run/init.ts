/** What `flowrules init` and `flowrules pull` do when they run (their flags: ../init.ts). */
import type { Command } from "commander";
import { runLogged } from "../../log/index.js";
import { catalogSettings, connectionRun, serviceIO } from "../settings.js";

const workflowsOf = (c: { workflows?: string }): { workflows?: string } => (c.workflows !== undefined ? { workflows: c.workflows } : {});

export async function init(dir: string, opts: Record<string, unknown>, command: Command): Promise<void> {
  const { connection, fields } = connectionRun(opts, process.env);
  const io = serviceIO(command, connection);
  const workflows = (opts.workflow as string[] | undefined) ?? [];
  process.exitCode = await runLogged(io, "init", { dir, workflows, ...fields }, async (io) =>
    (await import("../../commands/init.js")).initCommand({ dir, workflows, connection }, io),
  );
}

export async function pull(paths: string[], opts: Record<string, unknown>, command: Command): Promise<void> {
  const { connection, fields } = connectionRun(opts, process.env);
  const io = serviceIO(command, connection);
  process.exitCode = await runLogged(io, "pull", { paths, ...fields }, async (io) =>
    (await import("../../commands/pull.js")).pullCommand({ paths, ...workflowsOf(catalogSettings(opts, process.env)), connection, ...(fields.profile ? { profile: fields.profile } : {}) }, io),
  );
}
