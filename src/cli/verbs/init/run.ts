/** What `flowrules init` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { connectionRun } from "../../settings.js";
import { Repeated, verbIO, verbRun } from "../run-verb.js";

export const run = verbRun({
  name: "init",
  args: z.tuple([z.string()]),
  flags: z.object({ workflow: Repeated }),
  start({ args: [dir], flags, raw, command, env }) {
    const { connection, fields } = connectionRun(raw, env);
    const workflows = flags.workflow;
    return {
      io: verbIO(command, [connection.apiKey]),
      fields: { dir, workflows, ...fields },
      exec: async (io) => (await import("../../../commands/init.js")).initCommand({ dir, workflows, connection }, io),
    };
  },
});
