/** What `flowrules plan` does when it runs (its flags: ./flags.ts; the command: src/commands/plan.ts). */
import { z } from "zod";
import { UserError } from "../../../model/errors.js";
import { readDuration } from "../../../text/duration.js";
import { readInstant } from "../../../text/instant.js";
import { PLAN_FORMAT_NAMES } from "../../../render/format-names.js";
import { runFields, runOptions, runSettings } from "../../settings.js";
import { Paths, verbIO, verbRun } from "../run-verb.js";
import { ENV } from "../../../model/env-names.js";
import { setDefaultSpillBytes } from "../../../fs/spill-bytes.js";

/** `plan --compare` is its own command module, loaded only when asked for. */
async function planVerb(compare: string | undefined) {
  return compare !== undefined
    ? (await import("../../../commands/plan-compare.js")).comparePlanCommand
    : (await import("../../../commands/plan.js")).planCommand;
}

/** `plan`'s own flags; the planning, connection and output settings are the table's (../../settings.ts). */
const Flags = z.object({
  format: z.enum(PLAN_FORMAT_NAMES),
  out: z.string().optional(),
  reportDir: z.string().optional(),
  compare: z.string().optional(),
  at: z.string().optional(),
  forecast: z.string().optional(),
  maxDuration: z.string().optional(),
});

export const run = verbRun({
  name: "plan",
  args: Paths,
  flags: Flags,
  start({ args: [paths], flags: { at: atText, forecast, maxDuration, ...flags }, raw, command, env }) {
    // reading stops after it; with --state the sync so far is kept (docs/operating.md, "A first sync over several runs")
    const bound = maxDuration === undefined ? undefined : readDuration(maxDuration, { min: 1000 });
    if (bound && !bound.ok) throw new UserError(`--max-duration ${bound.problem}`);
    const at = atText === undefined ? undefined : readInstant(atText, new Date());
    if (at && !at.ok) throw new UserError(`--at ${at.problem}`);
    const horizon = forecast === undefined ? undefined : readDuration(forecast, { min: 60_000, timer: false });
    if (horizon && !horizon.ok) throw new UserError(`--forecast ${horizon.problem}`);
    if (horizon && flags.compare === undefined)
      throw new UserError(
        "--forecast goes with --compare REF (a forecast of the whole rule set is `flowrules forecast --until +7d`)",
      );
    if (at && flags.compare !== undefined)
      throw new UserError("--at cannot be combined with --compare: use --compare REF --forecast DURATION");
    const run = runSettings(raw, env);
    const spill = env[ENV.planSpillBytes];
    if (spill !== undefined) setDefaultSpillBytes(Number(spill));
    return {
      io: verbIO(command, [run.connection.apiKey]),
      fields: { paths, ...runFields(run), ...(flags.compare !== undefined ? { compare: flags.compare } : {}) },
      // a stop (../../signals.ts) ends the plan within seconds: no request starts, no plan and no state are written, exit 1
      stops: {},
      exec: async (io, signal) =>
        (await planVerb(flags.compare))(
          {
            paths,
            ...flags,
            ...runOptions(run),
            ...(at?.ok ? { at: at.at } : {}),
            ...(horizon?.ok ? { forecastMs: horizon.ms } : {}),
            ...(bound?.ok ? { planMaxDurationMs: bound.ms } : {}),
            signal,
          },
          io,
        ),
    };
  },
});
