/**
 * Collects per-instance outcomes into per-rule results while pages stream by, then assembles the plan: limits,
 * conflicts, stable ordering and the summary. Pure: the same outcomes always give the same plan.
 */
import type { CompiledRule } from "../rules/types.js";
import { report } from "../actions/index.js";
import type { ReportEntry } from "../actions/report.js";
import { resolveConflicts } from "./conflicts.js";
import type { InstanceOutcome } from "./evaluate-instance.js";
import type { Plan, PlanError, PlannedChange, PlannedReport, RulePlanSummary } from "../plan/types.js";

export interface RuleResult {
  rule: CompiledRule;
  workflowId: number | null;
  workflowName?: string;
  selected: number;
  matched: number;
  skipped: number;
  changes: PlannedChange[];
  reportEntries: Map<number, ReportEntry[]>;
  errors: PlanError[];
}

export function newRuleResult(rule: CompiledRule, workflowId: number | null, workflowName?: string): RuleResult {
  return {
    rule, workflowId, ...(workflowName ? { workflowName } : {}),
    selected: 0, matched: 0, skipped: 0, changes: [], reportEntries: new Map(), errors: [],
  };
}

export function addOutcome(result: RuleResult, outcome: InstanceOutcome): void {
  result.selected++;
  if (outcome.error) {
    result.errors.push(outcome.error);
    return;
  }
  if (!outcome.matched) return;
  result.matched++;
  result.skipped += outcome.skipped.length;
  for (const c of outcome.changes) result.changes.push(c);
  for (const { actionIndex, entry } of outcome.reportEntries) {
    const list = result.reportEntries.get(actionIndex);
    if (list) list.push(entry);
    else result.reportEntries.set(actionIndex, [entry]);
  }
}

export interface PlanMeta {
  createdAt: Date;
  baseUrl: string;
  rulesDigest: string;
  version: string;
  requests?: number;
  /** errors found outside any rule's evaluation (workflow resolution, API failures) */
  errors?: PlanError[];
}

const KIND_ORDER = { complete_step: 0, save_step: 1, abort: 2 } as const;

export function assemblePlan(results: RuleResult[], meta: PlanMeta): Plan {
  const errors: PlanError[] = [...(meta.errors ?? [])];
  const failed = new Set<string>(meta.errors?.flatMap((e) => (e.rule ? [e.rule] : [])) ?? []);
  const candidate: PlannedChange[] = [];
  const reports: PlannedReport[] = [];

  for (const r of results) {
    errors.push(...r.errors);
    const limit = r.rule.limits.max_instances;
    const mutating = r.rule.actions.some((a) => a.kind !== "report");
    if (limit !== undefined && mutating && r.matched > limit) {
      failed.add(r.rule.name);
      errors.push({
        code: "limit",
        rule: r.rule.name,
        message:
          `rule "${r.rule.name}" matched ${r.matched} instances, above its limit max_instances: ${limit}; ` +
          `none of its changes are planned`,
      });
      continue;
    }
    candidate.push(...r.changes);
    for (const [actionIndex, entries] of r.reportEntries) {
      const action = r.rule.actions[actionIndex];
      if (action?.kind === "report") reports.push(report.build(r.rule, action, entries));
    }
    // a report rule that matched nothing still shows, with no groups
    for (const [i, action] of r.rule.actions.entries()) {
      if (action.kind === "report" && !r.reportEntries.has(i)) reports.push(report.build(r.rule, action, []));
    }
  }

  const { changes, errors: conflictErrors } = resolveConflicts(candidate);
  errors.push(...conflictErrors);
  const order = new Map(results.map((r, i) => [r.rule.name, i]));
  changes.sort(
    (a, b) =>
      (order.get(a.rule) ?? 0) - (order.get(b.rule) ?? 0) ||
      a.instance_id - b.instance_id ||
      KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
      (a.step_id ?? 0) - (b.step_id ?? 0),
  );
  const perRule = new Map<string, number>();
  for (const c of changes) perRule.set(c.rule, (perRule.get(c.rule) ?? 0) + 1);

  const rules: RulePlanSummary[] = results.map((r) => ({
    name: r.rule.name,
    workflow_id: r.workflowId,
    ...(r.workflowName ? { workflow_name: r.workflowName } : {}),
    selected: r.selected,
    matched: r.matched,
    changes: perRule.get(r.rule.name) ?? 0,
    skipped: r.skipped,
    status: failed.has(r.rule.name) || r.errors.length > 0 ? "failed" : "ok",
  }));
  const count = (k: PlannedChange["kind"]): number => changes.filter((c) => c.kind === k).length;

  return {
    format_version: 1,
    flowrules_version: meta.version,
    created_at: meta.createdAt.toISOString(),
    base_url: meta.baseUrl,
    rules_digest: meta.rulesDigest,
    rules,
    changes,
    reports,
    errors,
    summary: {
      complete_step: count("complete_step"),
      save_step: count("save_step"),
      abort: count("abort"),
      reports: reports.length,
      errors: errors.length,
      ...(meta.requests !== undefined ? { requests: meta.requests } : {}),
    },
  };
}
