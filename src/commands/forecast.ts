/**
 * `flowrules forecast PATHS --until +DURATION [--every 1d]` (docs/forecast.md): per rule, the changes time alone
 * brings at each point of the horizon, from data read once, now. Each point is the plan `plan --at` makes for it.
 */
import type { ConnectionSettings } from "../model/settings.js";
import { EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import type { CommandIO } from "../log/command-io.js";
import type { Plan } from "../plan/types.js";
import { forecastInstants, forecastPlans, type ForecastRun } from "../engine/forecast.js";
import { FORECAST_FORMATS, type ForecastFormat } from "../render/forecast/index.js";
import { loadPlanning, planRuleSet, type PlanRunOptions } from "./planning.js";
import { changedRuleSet } from "../ci/changed-plan.js";
import { forecastDocument } from "./forecast-document.js";
import type { RuleSet } from "../rules/types.js";
import type { ForecastDocument } from "../render/forecast/types.js";

export interface ForecastCommandOptions extends PlanRunOptions {
  paths: string[];
  format: ForecastFormat;
  until: Date;
  everyMs: number;
  connection: ConnectionSettings;
}

/** The most points a forecast plans: a step that small over that long is a mistake, not a question. */
export const MAX_POINTS = 400;

export async function forecastCommand(opts: ForecastCommandOptions, io: CommandIO): Promise<number> {
  const start = opts.now ?? new Date();
  if (opts.until.getTime() <= start.getTime())
    throw new UserError("--until must be later than now (+7d, +36h or an ISO instant to come)");
  const instants = forecastInstants(start, opts.until, opts.everyMs);
  if (instants.length > MAX_POINTS)
    throw new UserError(
      `--every ${opts.everyMs / 1000}s over that horizon makes ${instants.length} points; at most ${MAX_POINTS}: choose a longer --every`,
    );
  const loaded = await loadPlanning(opts.paths, opts, io);
  if (!loaded) return EXIT_ERROR;
  const ruleSet = loaded.changed ? changedRuleSet(loaded.ruleSet, loaded.changed) : loaded.ruleSet;
  const doc = await forecastRuleSet(ruleSet, opts, io, start, instants, opts.everyMs);
  io.stdout(FORECAST_FORMATS[opts.format](doc));
  return doc.errors.length > 0 ? EXIT_ERROR : EXIT_OK;
}

/**
 * The forecast of a loaded rule set at `instants`, as one planning run (its client, progress, structure checks and
 * request count; the points share the client); never with the state (docs/forecast.md).
 */
export async function forecastRuleSet(
  ruleSet: RuleSet,
  opts: PlanRunOptions & { connection: ConnectionSettings },
  io: CommandIO,
  start: Date,
  instants: Date[],
  everyMs: number,
): Promise<ForecastDocument> {
  let run: ForecastRun | undefined;
  let requests = 0;
  let baseUrl = opts.connection.baseUrl;
  const { state: _state, at: _at, ...planning } = opts;
  await planRuleSet(
    ruleSet,
    opts.connection,
    io,
    { ...planning, now: start, forecasting: true },
    async (o): Promise<Plan> => {
      const { client, ...rest } = o;
      run = await forecastPlans({ ...rest, client, instants });
      requests = client.stats().total;
      baseUrl = client.baseUrl;
      const last = run.points.at(-1);
      if (!last) throw new UserError("nothing to forecast");
      return last.plan;
    },
  );
  if (!run) throw new UserError("nothing to forecast");
  return forecastDocument((run as ForecastRun).points, { createdAt: start, baseUrl, everyMs, requests });
}
