/** What `flowrules describe` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { DESCRIBE_FORMAT_NAMES } from "../../../render/format-names.js";
import { connectionRun } from "../../settings.js";
import { verbIO, verbRun } from "../run-verb.js";

export const run = verbRun({
  name: "describe",
  args: z.tuple([z.string()]),
  flags: z.object({ format: z.enum(DESCRIBE_FORMAT_NAMES) }),
  start({ args: [workflow], flags, raw, command, env }) {
    const { connection, fields } = connectionRun(raw, env);
    return {
      io: verbIO(command, [connection.apiKey]),
      fields: { workflow, ...fields },
      exec: async (io) =>
        (await import("../../../commands/describe.js")).describeCommand({ workflow, ...flags, connection }, io),
    };
  },
});
