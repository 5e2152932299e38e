/** `flowrules workflows`: the workflows this API key sees (one GET /processes/). */
import { clientFrom } from "../api/index.js";
import type { ConnectionSettings } from "../model/settings.js";
import { EXIT_OK } from "../model/errors.js";
import type { CommandIO } from "../log/command-io.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { WORKFLOWS_FORMATS, type WorkflowsFormat } from "../render/workflows/index.js";

export async function workflowsCommand(
  opts: { format: WorkflowsFormat; connection: ConnectionSettings },
  io: CommandIO,
): Promise<number> {
  const client = clientFrom(opts.connection, { onEvent: clientEventLogger(io.log ?? nullLogger) });
  try {
    const all = await client.listWorkflows();
    io.stdout(WORKFLOWS_FORMATS[opts.format](all));
    return EXIT_OK;
  } finally {
    await client.close();
  }
}
