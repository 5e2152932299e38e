/**
 * `flowrules plan`: load and validate the rules (no request before they are valid), plan against the service, render
 * to stdout, optionally write the JSON plan, and choose the exit code of the CLI contract.
 */
import { writeFile } from "node:fs/promises";
import { createClient } from "../api/index.js";
import type { ConnectionSettings } from "../cli/connection.js";
import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK } from "../cli/exit.js";
import { withDigest } from "../engine/plan-digest.js";
import type { Plan } from "../engine/plan-types.js";
import { runPlan, type PlanProgress } from "../engine/run-plan.js";
import { PLAN_FORMATS, type PlanFormat } from "../render/plan/index.js";
import type { RuleSet } from "../rules/types.js";
import { loadRuleSetOrReport } from "./load.js";
import { useColor, type CommandIO } from "./io.js";

export interface PlanCommandOptions {
  paths: string[];
  format: PlanFormat;
  out?: string;
  detailedExitcode: boolean;
  rules: string[];
  quiet: boolean;
  connection: ConnectionSettings;
  now?: Date;
  shard?: { index: number; count: number };
}

/** Progress on stderr, only on a terminal and only for selections big enough to wait for. */
function progressReporter(io: CommandIO, quiet: boolean): ((p: PlanProgress) => void) | undefined {
  if (quiet || !io.stderrIsTTY) return undefined;
  return (p) => {
    if (p.total < 1000) return;
    const pct = Math.min(100, Math.floor((p.done / p.total) * 100));
    io.stderr(`\r${p.rule}: ${p.done}/${p.total} instances (${pct}%)${p.done >= p.total ? "\n" : ""}`);
  };
}

export function planExitCode(plan: Plan, detailed: boolean): number {
  if (plan.errors.length > 0) return EXIT_ERROR;
  return detailed && plan.changes.length > 0 ? EXIT_CHANGES : EXIT_OK;
}

export async function writePlanFile(file: string, plan: Plan): Promise<void> {
  await writeFile(file, `${JSON.stringify(withDigest(plan), null, 2)}\n`, { mode: 0o644 });
}

/** Plans an already loaded rule set against the service; shared by `plan` and `apply --auto-approve`. */
export async function planRuleSet(
  ruleSet: RuleSet,
  connection: ConnectionSettings,
  io: CommandIO,
  opts: { quiet: boolean; now?: Date; shard?: { index: number; count: number } },
): Promise<Plan> {
  const client = createClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    rateLimitPerMin: connection.rateLimitPerMin,
    concurrency: connection.concurrency,
    timeoutMs: connection.timeoutMs,
    insecureHttp: connection.insecureHttp,
  });
  const started = Date.now();
  try {
    const onProgress = progressReporter(io, opts.quiet);
    const plan = await runPlan({
      client,
      ruleSet,
      ...(opts.now ? { now: opts.now } : {}),
      ...(onProgress ? { onProgress } : {}),
      ...(opts.shard ? { shard: opts.shard } : {}),
    });
    if (!opts.quiet) {
      const s = ((Date.now() - started) / 1000).toFixed(1);
      io.stderr(`${client.stats().total} requests to ${client.baseUrl} in ${s} s\n`);
    }
    return plan;
  } finally {
    await client.close();
  }
}

export async function planCommand(opts: PlanCommandOptions, io: CommandIO): Promise<number> {
  const ruleSet = await loadRuleSetOrReport(opts.paths, opts.rules, io);
  if (!ruleSet) return EXIT_ERROR;
  const plan = await planRuleSet(ruleSet, opts.connection, io, opts);
  io.stdout(PLAN_FORMATS[opts.format](plan, { color: useColor(io), ...(opts.out ? { planFile: opts.out } : {}) }));
  if (opts.out) await writePlanFile(opts.out, plan);
  return planExitCode(plan, opts.detailedExitcode);
}
