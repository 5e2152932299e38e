/** What `flowrules forecast` does when it runs (its flags: ../forecast.ts). */
import type { Command } from "commander";
import { z } from "zod";
import { runLogged } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import { readDuration } from "../../text/duration.js";
import { readInstant } from "../../text/instant.js";
import { FORECAST_FORMAT_NAMES } from "../../render/format-names.js";
import { runFields, runSettings, serviceIO } from "../settings.js";
import { interruptions } from "../signals.js";

const Flags = z.object({
  format: z.enum(FORECAST_FORMAT_NAMES),
  until: z.string(),
  every: z.string(),
});

export async function forecast(paths: string[], opts: Record<string, unknown>, command: Command): Promise<void> {
  const parsed = Flags.safeParse(opts);
  if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const f = parsed.data;
  const now = new Date();
  const until = readInstant(f.until, now, { exact: true });
  if (!until.ok) throw new UserError(`--until ${until.problem}`);
  const every = readDuration(f.every, { min: 60_000 });
  if (!every.ok) throw new UserError(`--every ${every.problem}`);
  const run = runSettings(opts, process.env);
  const io = serviceIO(command, run.connection);
  const { signal, dispose } = interruptions(io);
  try {
    process.exitCode = await runLogged(
      io,
      "forecast",
      { paths, ...runFields(run), until: until.at.toISOString(), every: f.every },
      async (io) =>
        (await import("../../commands/forecast.js")).forecastCommand(
          {
            paths,
            format: f.format,
            until: until.at,
            everyMs: every.ms,
            now,
            ...run.planning,
            ...(run.profile ? { profile: run.profile } : {}),
            quiet: run.output.quiet,
            connection: run.connection,
            signal,
          },
          io,
        ),
    );
  } finally {
    dispose();
  }
}
