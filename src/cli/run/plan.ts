/** What `flowrules plan` does when it runs (its flags: ../plan.ts). */
import type { Command } from "commander";
import { z } from "zod";
import { runLogged } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import { readInstant } from "../../text/instant.js";
import { readDuration } from "../../text/duration.js";
import { PLAN_FORMAT_NAMES } from "../../render/format-names.js";
import { runFields, runSettings, serviceIO } from "../settings.js";
import { interruptions } from "../signals.js";

/** `plan --compare` is its own command module, loaded only when asked for. */
async function planVerb(compare: string | undefined) {
  return compare !== undefined ? (await import("../../commands/plan-compare.js")).comparePlanCommand : (await import("../../commands/plan.js")).planCommand;
}

/** `plan`'s own flags; the planning, connection and output settings are resolved in settings.ts. */
const Flags = z.object({
  format: z.enum(PLAN_FORMAT_NAMES),
  out: z.string().optional(),
  reportDir: z.string().optional(),
  compare: z.string().optional(),
  at: z.string().optional(),
  forecast: z.string().optional(),
});

export async function plan(paths: string[], opts: Record<string, unknown>, command: Command): Promise<void> {
  const parsed = Flags.safeParse(opts);
  if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const f = parsed.data;
  const at = f.at === undefined ? undefined : readInstant(f.at, new Date());
  if (at && !at.ok) throw new UserError(`--at ${at.problem}`);
  const horizon = f.forecast === undefined ? undefined : readDuration(f.forecast, { min: 60_000 });
  if (horizon && !horizon.ok) throw new UserError(`--forecast ${horizon.problem}`);
  if (horizon && f.compare === undefined) throw new UserError("--forecast goes with --compare REF (a forecast of the whole rule set is `flowrules forecast --until +7d`)");
  if (at && f.compare !== undefined) throw new UserError("--at cannot be combined with --compare: use --compare REF --forecast DURATION");
  const run = runSettings(opts, process.env);
  const io = serviceIO(command, run.connection);
  const fields = { paths, ...runFields(run), ...(f.compare !== undefined ? { compare: f.compare } : {}) };
  // a stop (../signals.ts) ends the plan within seconds: no request starts, no plan and no state are written, exit 1
  const { signal, dispose } = interruptions(io);
  try {
    process.exitCode = await runLogged(io, "plan", fields, async (io) => (await planVerb(f.compare))(
      {
        paths,
        format: f.format,
        ...(f.out !== undefined ? { out: f.out } : {}),
        ...(f.reportDir !== undefined ? { reportDir: f.reportDir } : {}),
        ...(f.compare !== undefined ? { compare: f.compare } : {}),
        ...run.planning,
        ...(at?.ok ? { at: at.at } : {}),
        ...(horizon?.ok ? { forecastMs: horizon.ms } : {}),
        ...(run.profile ? { profile: run.profile } : {}),
        detailedExitcode: run.output.detailedExitcode,
        quiet: run.output.quiet,
        connection: run.connection,
        ...(run.output.notify.length > 0 ? { notify: { urls: run.output.notify } } : {}),
        signal,
      },
      io,
    ));
  } finally {
    dispose();
  }
}
