import { Option, type Command } from "commander";
import { z } from "zod";
import { PLAN_FORMATS, type PlanFormat } from "../render/plan/index.js";
import { runLogged } from "../log/index.js";
import { UserError } from "../model/errors.js";
import { addConnectionOptions } from "./connection.js";
import { addNotifyOption } from "./operations.js";
import { addPlanningOptions, runFields, runSettings, serviceIO } from "./settings.js";
import { interruptions } from "./signals.js";

/** `plan --compare` is its own command module, loaded only when asked for. */
async function planVerb(compare: string | undefined) {
  return compare !== undefined ? (await import("../commands/plan-compare.js")).comparePlanCommand : (await import("../commands/plan.js")).planCommand;
}

/** `plan`'s own flags; the planning, connection and output settings are resolved in settings.ts. */
const Flags = z.object({
  format: z.enum(Object.keys(PLAN_FORMATS) as [PlanFormat, ...PlanFormat[]]),
  out: z.string().optional(),
  reportDir: z.string().optional(),
  compare: z.string().optional(),
});


export function registerPlan(program: Command): void {
  const cmd = program
    .command("plan")
    .description("show the API calls the rules imply against live data (dry run)")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .addOption(new Option("--format <format>", "output format").choices(Object.keys(PLAN_FORMATS)).default("text"))
    .option("--out <file>", "also write the JSON plan to this file (for `flowrules apply <file>`)")
    .option("--report-dir <dir>", "also write each report as <rule>.csv and <rule>.json into this folder")
    .option("--detailed-exitcode", "exit 0 when there is nothing to change, 2 when there are changes, 1 on error")
    .option("-q, --quiet", "no progress and no request count on stderr")
    .option("--compare <git-ref>", "show what the rule edits since this git ref change: both versions of each added, edited or removed rule planned in one run");
  addPlanningOptions(cmd, "plan");
  addNotifyOption(cmd);
  addConnectionOptions(cmd).action(async (paths: string[], opts: Record<string, unknown>, command: Command) => {
    const parsed = Flags.safeParse(opts);
    if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
    const f = parsed.data;
    const run = runSettings(opts, process.env);
    const io = serviceIO(command, run.connection);
    const fields = { paths, ...runFields(run), ...(f.compare !== undefined ? { compare: f.compare } : {}) };
    // a stop (./signals.ts) ends the plan within seconds: no request starts, no plan and no state are written, exit 1
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
  });
}
