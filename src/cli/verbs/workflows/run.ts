/** What `flowrules workflows` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { WORKFLOWS_FORMAT_NAMES } from "../../../render/format-names.js";
import { connectionRun } from "../../settings.js";
import { NoArgs, verbIO, verbRun } from "../run-verb.js";

export const run = verbRun({
  name: "workflows",
  args: NoArgs,
  flags: z.object({ format: z.enum(WORKFLOWS_FORMAT_NAMES) }),
  start({ flags, raw, command, env }) {
    const { connection, fields } = connectionRun(raw, env);
    return {
      io: verbIO(command, [connection.apiKey]),
      fields,
      exec: async (io) =>
        (await import("../../../commands/workflows.js")).workflowsCommand({ ...flags, connection }, io),
    };
  },
});
