/**
 * `flowrules plan`: load and validate the rules (no request before they are valid), plan against the service, render
 * to stdout, optionally write the JSON plan, and choose the exit code of the CLI contract.
 */
import type { ConnectionSettings } from "../model/settings.js";
import { plural } from "../text/plural.js";
import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import { writePlanFile } from "../plan/write.js";
import { checkOutputFile, checkOutputFolder, namesStdout } from "../fs/write-file.js";
import type { Plan } from "../plan/types.js";
import { PLAN_FORMAT_PIECES, PLAN_FORMATS, type PlanFormat } from "../render/plan/index.js";
import type { PlanRenderOptions } from "../render/plan/types.js";
import { reportFileClash, writeReportFiles } from "../render/report/files.js";
import { UserError } from "../model/errors.js";
import { CATALOG_FILE } from "../model/defaults.js";
import { savedLine } from "../render/plan/saved.js";
import { streamToStdout, useColor, type CommandIO } from "../log/command-io.js";
import { planPayload } from "../render/notify/payload.js";
import { sendNotification, type NotifySettings } from "./notify.js";
import { loadPlanning, PlanNotFinished, planLoaded, type PlanRunOptions } from "./planning.js";

export { planRuleSet } from "./planning.js";

/**
 * `plan`'s options: the run's planning settings (PlanRunOptions, shared with `apply --auto-approve`) and the output.
 * src/cli/verbs/plan/run.ts builds them from the resolved settings (src/cli/settings.ts).
 */
export interface PlanCommandOptions extends PlanRunOptions {
  paths: string[];
  format: PlanFormat;
  out?: string;
  /** also write each report as <rule>.csv and <rule>.json into this folder */
  reportDir?: string;
  detailedExitcode: boolean;
  rules: string[];
  connection: ConnectionSettings;
  /** show what the rule edits since this git ref change (`plan --compare`, ./plan-compare.ts) */
  compare?: string;
  /** with `compare`: what time alone does to the touched rules within this horizon (`--forecast 7d`) */
  forecastMs?: number;
  /** webhooks told at the end (--notify, its variable or a profile's notify) */
  notify?: NotifySettings;
}

export function planExitCode(plan: Plan, detailed: boolean): number {
  if (plan.errors.length > 0) return EXIT_ERROR;
  return detailed && plan.changes.length > 0 ? EXIT_CHANGES : EXIT_OK;
}

/**
 * `--out` and `--report-dir` checked before the rules load and any request: a folder, a device or a FIFO at the path
 * is one line now, not a raw system error after the whole plan was made.
 */
export async function checkPlanOutputs(opts: Pick<PlanCommandOptions, "out" | "reportDir">): Promise<void> {
  if (opts.out !== undefined) await checkOutputFile(opts.out);
  if (opts.reportDir !== undefined) await checkOutputFolder(opts.reportDir);
}

export async function planCommand(opts: PlanCommandOptions, io: CommandIO): Promise<number> {
  const startedAt = new Date();
  await checkPlanOutputs(opts);
  const loaded = await loadPlanning(opts.paths, opts, io);
  if (!loaded) return EXIT_ERROR;
  // a plan written to a file may be applied: it records what it saw of each instance (src/engine/seen.ts)
  let plan: Plan;
  try {
    plan = await planLoaded(loaded, opts.connection, io, { ...opts, recordSeen: opts.out !== undefined });
  } catch (err) {
    if (!(err instanceof PlanNotFinished)) throw err;
    // a bounded run that read what it could: no plan, not an error; --detailed-exitcode cannot say "no changes"
    io.log?.event("plan.not_finished", { message: err.message }, "warn");
    if (io.log?.structured !== true) io.stderr(`${err.message}\n`);
    return opts.detailedExitcode ? EXIT_ERROR : EXIT_OK;
  }
  const pieces = PLAN_FORMAT_PIECES[opts.format];
  await emitPlan(plan, (view) => pieces?.(plan, view) ?? PLAN_FORMATS[opts.format](plan, view), opts, io, startedAt);
  return planExitCode(plan, opts.detailedExitcode);
}

/**
 * The end of a plan run (`plan`, `plan --compare`): the view on stdout (drawn by `render` in colour on a terminal,
 * naming the plan file), the JSON plan file, report files, webhooks.
 */
export async function emitPlan(
  plan: Plan,
  render: (options: PlanRenderOptions) => string | Iterable<string>,
  opts: PlanCommandOptions,
  io: CommandIO,
  startedAt: Date,
): Promise<void> {
  // drawn as it is written: the JSON view comes in pieces (the plan's rows are never one string)
  const view = render({ color: useColor(io), ...(opts.out ? { planFile: opts.out } : {}) });
  if (opts.reportDir) {
    // before anything is written: a report named like the plan file or the catalog would replace it
    const others = [
      ...(opts.out && opts.out !== "-" && !opts.out.startsWith("/dev/")
        ? [{ path: opts.out, what: "the plan file --out writes" }]
        : []),
      { path: opts.workflows ?? CATALOG_FILE, what: "the workflow catalog" },
    ];
    const clash = await reportFileClash(opts.reportDir, plan, others);
    if (clash !== undefined) throw new UserError(clash);
  }
  // a plan file on stdout (`--out -`, `/dev/stdout`, `/dev/fd/1`) is the one document there (a pipeline's `| jq`
  // reads one): the view goes to stderr, and with --format json it is that document already. Another descriptor
  // named as a path (/dev/fd/3, `>(jq …)`) is written into after the view, as docs/operating.md says
  if (opts.out === undefined || !namesStdout(opts.out)) await streamToStdout(io, view);
  else if (opts.format !== "json") io.stderr(typeof view === "string" ? view : [...view].join(""));
  if (opts.out) await writePlanFile(opts.out, plan);
  if (opts.reportDir) {
    const files = await writeReportFiles(opts.reportDir, plan);
    if (!opts.quiet) io.stderr(`${plural(files.length / 2, "report")} written to ${opts.reportDir}\n`);
  }
  // built only when a webhook is told
  if (opts.notify && opts.notify.urls.length > 0)
    await sendNotification(
      opts.notify,
      planPayload(plan, { startedAt, finishedAt: new Date() }, opts.out ? { planFile: opts.out } : {}),
      io,
    );
  // the last line: where the plan is and the command that applies exactly it
  if (opts.out && !opts.quiet && io.log?.structured !== true) io.stderr(savedLine(opts.out, plan));
}
