/** `flowrules plan [paths...]`: its flags; what it does when it runs is ./run.ts, loaded then. */
import type { Command } from "commander";
import { PLAN_FORMAT_NAMES } from "../../../render/format-names.js";
import { addConnectionOptions } from "../../connection.js";
import { addPlanningOptions } from "../../flags.js";
import { addNotifyOption } from "../../operations.js";
import { defineVerb, RULE_PATHS, verbCommand } from "../define.js";

export function registerPlan(program: Command): void {
  const cmd = verbCommand(program, "plan", {
    description: "show the API calls the rules imply against live data (dry run)",
    argument: RULE_PATHS,
    format: PLAN_FORMAT_NAMES,
  })
    .option(
      "--out <file>",
      "also write the JSON plan to this file (for `flowrules apply <file>`); `-` or /dev/stdout: the plan file is then the only document on stdout, and the view goes to stderr",
    )
    .option("--report-dir <dir>", "also write each report as <rule>.csv and <rule>.json into this folder")
    .option("--detailed-exitcode", "exit 0 when there is nothing to change, 2 when there are changes, 1 on error")
    .option("-q, --quiet", "no progress and no request count on stderr")
    .option(
      "--max-duration <duration>",
      "stop reading after this long (90s, 50m, 2h): with --state the sync so far is kept and the same command again continues it; no plan unless it finished",
    )
    .option(
      "--at <time>",
      "a forecast: the plan as it would be at this instant if nobody changed anything (ISO instant such as 2026-12-05T09:00Z, or +DURATION such as +7d); apply refuses it",
    )
    .option(
      "--compare <git-ref>",
      "show what the rule edits since this git ref change: both versions of each added, edited or removed rule planned in one run",
    )
    .option(
      "--forecast <duration>",
      "with --compare: also say what time alone does to each added or edited rule within this horizon (7d, 36h)",
    );
  addPlanningOptions(cmd, "plan");
  addNotifyOption(cmd);
  defineVerb(addConnectionOptions(cmd), () => import("./run.js"));
}
