/** What `flowrules pull` does when it runs (its flags: ./flags.ts). */
import { z } from "zod";
import { catalogSettings, connectionRun } from "../../settings.js";
import { Paths, verbIO, verbRun } from "../run-verb.js";

export const run = verbRun({
  name: "pull",
  args: Paths,
  flags: z.object({}),
  start({ args: [paths], raw, command, env }) {
    const { connection, fields } = connectionRun(raw, env);
    const { workflows } = catalogSettings(raw, env);
    return {
      io: verbIO(command, [connection.apiKey]),
      fields: { paths, ...fields },
      exec: async (io) =>
        (await import("../../../commands/pull.js")).pullCommand(
          { paths, workflows, connection, profile: fields.profile },
          io,
        ),
    };
  },
});
