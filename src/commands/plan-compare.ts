/**
 * `flowrules plan --compare <git-ref>` (docs/contracts.md, "What a rule edit changes"): the rules added, edited or removed since the ref,
 * both versions planned in one run against the same live data, and what the edit changes. Exit codes as `plan`,
 * except that `--detailed-exitcode` gives 2 when there is any impact (not when there are changes).
 */
import { horizonWords } from "../text/instant.js";
import type { RuleSet } from "../rules/types.js";
import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { DEFAULT_RULE_PATHS } from "../rules/index.js";
import { compareInput } from "../ci/compare.js";
import { textSafe } from "../render/escape.js";
import { hasImpact, impactCounts, type ComparePlan } from "../engine/impact.js";
import { runCompare } from "../engine/plan-compare.js";
import { COMPARE_FORMATS } from "../render/compare/index.js";
import type { CommandIO } from "../log/command-io.js";
import { loadRuleSetOrReport } from "./load.js";
import { checkPlanOutputs, emitPlan, planRuleSet, type PlanCommandOptions } from "./plan.js";

export function compareExitCode(plan: ComparePlan, detailed: boolean): number {
  if (plan.errors.length > 0) return EXIT_ERROR;
  return detailed && hasImpact(plan.impact) ? EXIT_CHANGES : EXIT_OK;
}

/** Options that make no sense with --compare are refused in one line (docs/ci.md, "What a rule edit changes"). */
function refuseCombinations(opts: PlanCommandOptions): void {
  if (opts.changedSince !== undefined) {
    throw new UserError(
      "--compare and --changed-since cannot be combined: --compare already plans only the rules changed since its ref",
    );
  }
  if (opts.shard !== undefined) {
    throw new UserError(
      "--compare cannot be combined with --shard: the impact of a rule edit is judged on all its instances in one run",
    );
  }
}

/**
 * `--forecast DURATION`: what time alone does to the working tree's added and edited rules within the horizon, one
 * point a day (an hour when the horizon is under two days), from one more forecast run (docs/forecast.md).
 */
async function addForecast(
  plan: ComparePlan,
  ruleSet: RuleSet,
  opts: PlanCommandOptions,
  io: CommandIO,
  horizonMs: number,
): Promise<void> {
  const touched = new Set(plan.impact.filter((i) => i.status !== "removed").map((i) => i.rule));
  const rules = ruleSet.rules.filter((r) => touched.has(r.name));
  if (rules.length === 0) return;
  const { forecastInstants } = await import("../engine/forecast.js");
  const { forecastRuleSet } = await import("./forecast.js");
  const start = new Date();
  const everyMs = horizonMs >= 2 * 86_400_000 ? 86_400_000 : 3_600_000;
  const until = new Date(start.getTime() + horizonMs);
  const doc = await forecastRuleSet(
    { ...ruleSet, rules },
    { ...opts, quiet: true },
    io,
    start,
    forecastInstants(start, until, everyMs),
    everyMs,
  );
  for (const i of plan.impact) {
    const r = doc.rules.find((x) => x.rule === i.rule);
    const last = r?.points.at(-1);
    if (!r || !last) continue;
    const first = r.points.slice(1).find((p) => p.step_added > 0 || p.step_removed > 0);
    i.forecast = {
      horizon: horizonWords(horizonMs),
      until: until.toISOString(),
      added: last.added,
      removed: last.removed,
      ...(first ? { first_at: first.at } : {}),
    };
  }
}

export async function comparePlanCommand(opts: PlanCommandOptions, io: CommandIO): Promise<number> {
  if (opts.compare === undefined) throw new UserError("plan --compare needs a git ref");
  refuseCombinations(opts);
  await checkPlanOutputs(opts);
  const startedAt = new Date();
  // the whole working tree is loaded and validated; --rule narrows the comparison (a removed rule is not in it)
  const ruleSet = await loadRuleSetOrReport(opts.paths, [], io);
  if (!ruleSet) return EXIT_ERROR;
  const input = await compareInput(
    opts.compare,
    opts.paths.length > 0 ? opts.paths : DEFAULT_RULE_PATHS,
    ruleSet,
    opts.rules,
  );
  for (const w of input.warnings) {
    io.log?.event("rules.compare_warning", { message: w }, "warn");
    if (!io.log?.structured) io.stderr(`warning: ${textSafe(w)}\n`);
  }
  const { ref, commit, touched, unchanged } = input.sides;
  io.log?.event("rules.compared", { ref, commit, touched: touched.map((t) => `${t.rule} (${t.status})`), unchanged });
  const plan = (await planRuleSet(input.ruleSet, opts.connection, io, opts, (o) =>
    runCompare(o, input.sides),
  )) as ComparePlan;
  if (opts.forecastMs !== undefined) await addForecast(plan, input.ruleSet, opts, io, opts.forecastMs);
  for (const i of plan.impact) io.log?.event("rule.impact", { rule: i.rule, status: i.status, ...impactCounts(i) });
  await emitPlan(plan, (view) => COMPARE_FORMATS[opts.format](plan, view), opts, io, startedAt);
  return compareExitCode(plan, opts.detailedExitcode);
}
