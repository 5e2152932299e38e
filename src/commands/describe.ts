/**
 * `flowrules describe <workflow>`: its steps in order with their form fields, read from its newest instance (one
 * GET /processes/, one list request, one instance read).
 */
import { clientFrom } from "../api/index.js";
import type { ConnectionSettings } from "../model/settings.js";
import { EXIT_OK } from "../model/errors.js";
import type { CommandIO } from "../log/command-io.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { DESCRIBE_FORMATS, type DescribeFormat } from "../render/describe/index.js";
import { pickWorkflow, structureOf, workflowSource } from "./workflow-source.js";

export async function describeCommand(
  opts: { workflow: string; format: DescribeFormat; connection: ConnectionSettings },
  io: CommandIO,
): Promise<number> {
  const client = clientFrom(opts.connection, { onEvent: clientEventLogger(io.log ?? nullLogger) });
  try {
    const src = await workflowSource(client);
    const structure = await structureOf(src, pickWorkflow(src, opts.workflow));
    io.stdout(DESCRIBE_FORMATS[opts.format](structure));
    return EXIT_OK;
  } finally {
    await client.close();
  }
}
