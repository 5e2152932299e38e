/** What `flowrules forecast` does when it runs (its flags: ./flags.ts; the command: src/commands/forecast.ts). */
import { z } from "zod";
import { defined } from "../../../model/defined.js";
import { UserError } from "../../../model/errors.js";
import { FORECAST_FORMAT_NAMES } from "../../../render/format-names.js";
import { readDuration } from "../../../text/duration.js";
import { readInstant } from "../../../text/instant.js";
import { runFields, runSettings } from "../../settings.js";
import { Paths, verbIO, verbRun } from "../run-verb.js";

const Flags = z.object({ format: z.enum(FORECAST_FORMAT_NAMES), until: z.string(), every: z.string() });

export const run = verbRun({
  name: "forecast",
  args: Paths,
  flags: Flags,
  start({ args: [paths], flags, raw, command, env }) {
    const now = new Date();
    const until = readInstant(flags.until, now, { exact: true });
    if (!until.ok) throw new UserError(`--until ${until.problem}`);
    const every = readDuration(flags.every, { min: 60_000 });
    if (!every.ok) throw new UserError(`--every ${every.problem}`);
    const run = runSettings(raw, env);
    return {
      io: verbIO(command, [run.connection.apiKey]),
      fields: { paths, ...runFields(run), until: until.at.toISOString(), every: flags.every },
      // a stop ends the forecast within seconds: no request starts, nothing is written, exit 1
      stops: {},
      exec: async (io, signal) =>
        (await import("../../../commands/forecast.js")).forecastCommand(
          {
            paths,
            format: flags.format,
            until: until.at,
            everyMs: every.ms,
            now,
            ...run.planning,
            ...defined({ profile: run.profile }),
            quiet: run.output.quiet,
            connection: run.connection,
            signal,
          },
          io,
        ),
    };
  },
});
