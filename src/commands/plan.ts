/**
 * `flowrules plan`: load and validate the rules (no request before they are valid), plan against the service, render
 * to stdout, optionally write the JSON plan, and choose the exit code of the CLI contract.
 */
import { open } from "node:fs/promises";
import { clientFrom } from "../api/index.js";
import type { ConnectionSettings } from "../api/connection.js";
import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { maskKeyInPlan } from "../engine/mask-plan.js";
import { withDigest } from "../plan/digest.js";
import type { Plan } from "../plan/types.js";
import { runPlan, type PlanProgress, type RequestChoice } from "../engine/plan-live.js";
import { PLAN_FORMATS, type PlanFormat } from "../render/plan/index.js";
import { writeReportFiles } from "../render/report/files.js";
import type { RuleSet } from "../rules/types.js";
import { DEFAULT_RULE_PATHS } from "../rules/index.js";
import { rulesChangedSince } from "../ci/changed-since.js";
import { changedRuleSet, renderPlanOutput, withChangedSince } from "../ci/changed-plan.js";
import { shardLabel } from "../plan/shard.js";
import { progressView } from "../render/progress/index.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { logPlan } from "../render/events/plan.js";
import { loadRuleSetOrReport } from "./load.js";
import { CATALOG_FILE, readCatalog } from "../rules/catalog.js";
import { useColor, type CommandIO } from "../log/command-io.js";
import { planPayload } from "../render/notify/payload.js";
import { sendNotification, type NotifySettings } from "./notify.js";

export interface PlanCommandOptions {
  paths: string[];
  format: PlanFormat;
  out?: string;
  /** also write each report as <rule>.csv and <rule>.json into this folder */
  reportDir?: string;
  detailedExitcode: boolean;
  rules: string[];
  quiet: boolean;
  connection: ConnectionSettings;
  now?: Date;
  shard?: { index: number; count: number };
  /** plan only the rules added or edited since this git ref; list the removed ones (src/ci/changed-since.ts) */
  changedSince?: string;
  /** instances carrying this tag are changed by no rule; undefined = off */
  optOutTag?: string;
  /** webhooks told at the end (--notify / FLOWRULES_NOTIFY_URL) */
  notify?: NotifySettings;
  /** say on stderr why each list, field page or record read is asked (or not) */
  explainRequests?: boolean;
  /** the workflow catalog to compare the live structure with (default flowrules.workflows.json, when present) */
  workflows?: string;
}

/** One request choice of the query planner as a line for people. */
function explainLine(c: RequestChoice): string {
  const n = `${c.requests} request${c.requests === 1 ? "" : "s"}`;
  const who = c.rules && c.rules.length > 0 ? ` [${c.rules.join(", ")}]` : "";
  return `requests: workflow ${c.workflow_id}, ${c.subject}: ${c.choice}, ${n}: ${c.why}${who}\n`;
}

export function planExitCode(plan: Plan, detailed: boolean): number {
  if (plan.errors.length > 0) return EXIT_ERROR;
  return detailed && plan.changes.length > 0 ? EXIT_CHANGES : EXIT_OK;
}

const CHANGES_MARKER = "\u0001flowrules-changes\u0001";

/**
 * Changes stringified at once when the plan file is written. Each batch's text stays below V8's large-object size
 * (~128 KB; a change is ~1.4 KB as a two-byte string), so one still being written when a scavenge comes is copied,
 * not promoted whole into the old generation.
 */
const WRITE_BATCH = 50;

/**
 * Writes the JSON plan (the same bytes as `JSON.stringify(withDigest(plan), null, 2)`) a batch of changes at a time,
 * so a plan of 100,000 changes is never held as one string.
 */
export async function writePlanFile(file: string, plan: Plan): Promise<void> {
  const signed = withDigest(plan);
  const head = JSON.stringify({ ...signed, changes: CHANGES_MARKER }, null, 2);
  const at = head.indexOf(JSON.stringify(CHANGES_MARKER));
  const fh = await open(file, "w", 0o644);
  try {
    if (signed.changes.length === 0) await fh.write(`${head.slice(0, at)}[]`);
    else {
      await fh.write(`${head.slice(0, at)}[\n`);
      for (let i = 0; i < signed.changes.length; i += WRITE_BATCH) {
        // inside `{ "c": [ … ] }` stringified with 2 spaces, the elements sit at the plan's own depth (4 spaces)
        const wrapped = JSON.stringify({ c: signed.changes.slice(i, i + WRITE_BATCH) }, null, 2);
        const last = i + WRITE_BATCH >= signed.changes.length;
        await fh.write(wrapped.slice(WRAP_HEAD.length, wrapped.length - WRAP_TAIL.length));
        await fh.write(last ? "\n  ]" : ",\n");
      }
    }
    await fh.write(`${head.slice(at + JSON.stringify(CHANGES_MARKER).length)}\n`);
  } finally {
    await fh.close();
  }
}

const WRAP_HEAD = '{\n  "c": [\n';
const WRAP_TAIL = "\n  ]\n}";

/** Plans an already loaded rule set against the service; shared by `plan` and `apply --auto-approve`. */
export async function planRuleSet(
  ruleSet: RuleSet,
  connection: ConnectionSettings,
  io: CommandIO,
  opts: { quiet: boolean; now?: Date; shard?: { index: number; count: number }; explainRequests?: boolean; optOutTag?: string; workflows?: string },
): Promise<Plan> {
  // progress per rule (requests done of expected, ETA under the rate limit): a terminal line, or `progress` events
  const view = progressView(io, { quiet: opts.quiet, ratePerMin: connection.rateLimitPerMin, rules: ruleSet.rules.length });
  const logClientEvent = clientEventLogger(io.log ?? nullLogger);
  const client = clientFrom(connection, {
    onEvent: (e) => {
      logClientEvent(e);
      view.clientEvent(e);
    },
  });
  const log = io.log ?? nullLogger;
  const onWarning = (message: string): void => {
    // once the service refused the key or cannot be reached, the one error at the end says so (issue 28)
    if (client.unusable()) return;
    log.event("structure.warning", { message }, "warn");
    if (!log.structured) io.stderr(`warning: ${message}\n`);
  };
  const catalog = await readCatalog(opts.workflows ?? CATALOG_FILE, { required: opts.workflows !== undefined, baseUrl: client.baseUrl });
  catalog.warnings.forEach(onWarning);
  const started = Date.now();
  try {
    const onProgress = (p: PlanProgress): void => {
      if (log.structured) log.event("rule.progress", { rule: p.rule, done: p.done, total: p.total }, "debug");
      view.plan(p);
    };
    const plan = await runPlan({
      client,
      ruleSet,
      ...(opts.now ? { now: opts.now } : {}),
      onProgress,
      ...(opts.shard ? { shard: opts.shard } : {}),
      ...(opts.optOutTag ? { optOutTag: opts.optOutTag } : {}),
      // why each request is made: always in the JSON log, on stderr with --explain-requests
      onRequestChoice: (c) => {
        log.event("plan.requests", { ...c }, "debug");
        if (opts.explainRequests && !log.structured) io.stderr(explainLine(c));
      },
      ...(catalog.catalog ? { catalog: catalog.catalog.workflows } : {}),
      onWarning,
    });
    view.finish();
    const unusable = client.unusable();
    if (unusable) throw new UserError(`${unusable.message}; nothing was planned`);
    maskKeyInPlan(plan, connection.apiKey);
    const ms = Date.now() - started;
    logPlan(log, plan, { duration_ms: ms, requests: client.stats().total, ...(opts.shard ? { shard: shardLabel(opts.shard) } : {}) });
    if (!opts.quiet && !log.structured) {
      const s = (ms / 1000).toFixed(1);
      io.stderr(`${client.stats().total} requests to ${client.baseUrl} in ${s} s\n`);
    }
    return plan;
  } finally {
    view.finish();
    await client.close();
  }
}

export async function planCommand(opts: PlanCommandOptions, io: CommandIO): Promise<number> {
  const startedAt = new Date();
  const ruleSet = await loadRuleSetOrReport(opts.paths, opts.rules, io);
  if (!ruleSet) return EXIT_ERROR;
  const changed = opts.changedSince
    ? await rulesChangedSince(opts.changedSince, opts.paths.length > 0 ? opts.paths : DEFAULT_RULE_PATHS)
    : undefined;
  if (changed) {
    const { ref, commit, added, changed: edited, unchanged, removed } = changed;
    io.log?.event("rules.changed", { ref, commit, added, changed: edited, unchanged: unchanged.length, removed: removed.map((r) => r.name) });
  }
  const planned = await planRuleSet(changed ? changedRuleSet(ruleSet, changed) : ruleSet, opts.connection, io, opts);
  const plan = changed ? withChangedSince(planned, changed, opts.rules) : planned;
  io.stdout(renderPlanOutput(opts.format, plan, { color: useColor(io), ...(opts.out ? { planFile: opts.out } : {}) }));
  if (opts.out) await writePlanFile(opts.out, plan);
  if (opts.reportDir) {
    const files = await writeReportFiles(opts.reportDir, plan);
    if (!opts.quiet) io.stderr(`${files.length / 2} ${files.length === 2 ? "report" : "reports"} written to ${opts.reportDir}\n`);
  }
  await sendNotification(opts.notify, planPayload(plan, { startedAt, finishedAt: new Date() }, opts.out ? { planFile: opts.out } : {}), io);
  return planExitCode(plan, opts.detailedExitcode);
}
