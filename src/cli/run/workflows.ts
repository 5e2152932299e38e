/** What `flowrules workflows` and `flowrules describe` do when they run (their flags: ../workflows.ts). */
import type { Command } from "commander";
import { runLogged } from "../../log/index.js";
import type { DescribeFormat, WorkflowsFormat } from "../../render/format-names.js";
import { connectionRun, serviceIO } from "../settings.js";

export async function workflows(opts: Record<string, unknown>, command: Command): Promise<void> {
  const { connection, fields } = connectionRun(opts, process.env);
  const io = serviceIO(command, connection);
  process.exitCode = await runLogged(io, "workflows", { ...fields }, async (io) =>
    (await import("../../commands/workflows.js")).workflowsCommand({ format: opts.format as WorkflowsFormat, connection }, io),
  );
}

export async function describe(workflow: string, opts: Record<string, unknown>, command: Command): Promise<void> {
  const { connection, fields } = connectionRun(opts, process.env);
  const io = serviceIO(command, connection);
  process.exitCode = await runLogged(io, "describe", { workflow, ...fields }, async (io) =>
    (await import("../../commands/describe.js")).describeCommand({ workflow, format: opts.format as DescribeFormat, connection }, io),
  );
}
