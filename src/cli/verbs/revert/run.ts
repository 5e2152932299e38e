/** What `flowrules revert` does when it runs (its flags: ./flags.ts; the command: src/commands/revert.ts). */
import { z } from "zod";
import { PLANNING_FLAGS } from "../../flags.js";
import { connectionFrom, pathSetting, sourcesOf } from "../../settings.js";
import { verbIO, verbRun } from "../run-verb.js";
import { defined } from "../../../model/defined.js";

const Flags = z.object({
  cycle: z.string().optional(),
  out: z.string().optional(),
  state: z.string().optional(),
  quiet: z.boolean().default(false),
});

export const run = verbRun({
  name: "revert",
  args: z.tuple([z.string().optional()]),
  flags: Flags,
  start({ args: [source], flags, raw, command, env }) {
    const src = sourcesOf(raw, env);
    const connection = connectionFrom(src);
    // --state only with --cycle: a state from the environment or a profile does not turn a plan's revert into a cycle's
    const stateDir = flags.cycle !== undefined ? pathSetting(PLANNING_FLAGS.state, src) : flags.state;
    return {
      io: verbIO(command, [connection.apiKey]),
      fields: { ...(source ? { source } : {}), base_url: connection.baseUrl },
      exec: async (io) =>
        (await import("../../../commands/revert.js")).revertCommand(
          {
            ...defined({ source, stateDir, cycle: flags.cycle, out: flags.out }),
            connection,
            quiet: flags.quiet,
          },
          io,
        ),
    };
  },
});
