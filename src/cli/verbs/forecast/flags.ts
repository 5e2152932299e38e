/** `flowrules forecast [paths...]`: its flags; what it does when it runs is ./run.ts, loaded then (docs/forecast.md). */
import type { Command } from "commander";
import { FORECAST_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { addPlanningOptions, formatOption } from "../../flags.js";
import { defineVerb, RULE_PATHS, verbCommand } from "../define.js";

export function registerForecast(program: Command): void {
  const cmd = verbCommand(program, "forecast", {
    description:
      "what time alone brings: per rule, the changes its plan gains or loses at each point up to --until, if nobody changes anything (data read once, now)",
    argument: RULE_PATHS,
  })
    .requiredOption("--until <time>", "the horizon: +DURATION (+7d, +36h) or an ISO instant (2026-12-05T09:00Z)")
    .option("--every <duration>", "the step between points (1d, 12h, 6h)", "1d")
    .addOption(
      formatOption(FORECAST_FORMAT_NAMES, "output format: text, json (schemas/forecast.schema.json), markdown or html"),
    )
    .option("-q, --quiet", "no progress and no request count on stderr");
  addPlanningOptions(cmd, "plan");
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
