/** `flowrules forecast [paths...]`: its flags; what it does when it runs is ./run/forecast.ts, loaded then (docs/forecast.md). */
import { Option, type Command } from "commander";
import { FORECAST_FORMAT_NAMES } from "../render/format-names.js";
import { addConnectionOptions } from "./connection.js";
import { addPlanningOptions } from "./flags.js";

export function registerForecast(program: Command): void {
  const cmd = program
    .command("forecast")
    .description(
      "what time alone brings: per rule, the changes its plan gains or loses at each point up to --until, if nobody changes anything (data read once, now)",
    )
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .requiredOption("--until <time>", "the horizon: +DURATION (+7d, +36h) or an ISO instant (2026-12-05T09:00Z)")
    .option("--every <duration>", "the step between points (1d, 12h, 6h)", "1d")
    .addOption(
      new Option("--format <format>", "output format: text, json (schemas/forecast.schema.json), markdown or html")
        .choices(FORECAST_FORMAT_NAMES)
        .default("text"),
    )
    .option("-q, --quiet", "no progress and no request count on stderr");
  addPlanningOptions(cmd, "plan");
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>, command: Command) =>
    (await import("./run/forecast.js")).forecast(paths, opts, command),
  );
}
