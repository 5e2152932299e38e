/**
 * Collects per-instance outcomes into per-rule results while pages stream by, then assembles the plan: limits,
 * conflicts, stable ordering and the summary. Pure: the same outcomes always give the same plan.
 */
import type { CompiledRule } from "../rules/types.js";
import { defined } from "../model/defined.js";
import { actionKind, isMutating, kindOrder, MUTATING_KINDS, ReportEntries } from "../actions/index.js";
import { resolveConflicts } from "./conflicts.js";
import type { InstanceOutcome } from "./evaluate-instance.js";
import type { Plan, PlanError, PlannedChange, PlannedReport, RulePlanSummary } from "../plan/types.js";
import { aliasesShown, namesTable, type NameSource } from "./names.js";
import { plural } from "../text/plural.js";

export interface RuleResult {
  rule: CompiledRule;
  workflowId: number | null;
  workflowName?: string;
  selected: number;
  matched: number;
  skipped: number;
  /** `skipped` by the reason the action kind gave, in the order first met */
  skipReasons: Map<string, number>;
  changes: PlannedChange[];
  /** per report action (by index), its entries held compactly until the plan is written */
  reportEntries: Map<number, ReportEntries>;
  errors: PlanError[];
  /** instances of the selection left out by an exclusion; undefined when the rule had none in effect */
  excluded?: number;
  /** a rule over several workflows: each of them, as resolved this run (`workflowId` is then null) */
  workflowIds?: number[];
  /** with `workflow: "*"`: workflows the rule's step and field names do not fit, skipped, with why */
  workflowsSkipped?: Array<{ workflow_id: number; reason: string }>;
  /** started_time of instances with changes, when known (`limits.max_changes_per_run` plans the oldest first) */
  startedTimes: Map<number, string>;
  /** set when the rule was outside its `active` window and not run */
  inactive?: { reason: string; next_active_at?: string };
}

export function newRuleResult(rule: CompiledRule, workflowId: number | null, workflowName?: string): RuleResult {
  return {
    rule,
    workflowId,
    ...(workflowName ? { workflowName } : {}),
    selected: 0,
    matched: 0,
    skipped: 0,
    skipReasons: new Map(),
    changes: [],
    reportEntries: new Map(),
    errors: [],
    startedTimes: new Map(),
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
  for (const reason of outcome.skipReasons) result.skipReasons.set(reason, (result.skipReasons.get(reason) ?? 0) + 1);
  for (const c of outcome.changes) result.changes.push(c);
  if (outcome.changes.length > 0 && outcome.started_time !== undefined)
    result.startedTimes.set(outcome.instance_id, outcome.started_time);
  for (const { actionIndex, entry } of outcome.reportEntries) {
    let list = result.reportEntries.get(actionIndex);
    if (!list) result.reportEntries.set(actionIndex, (list = new ReportEntries()));
    list.add(entry);
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
  /**
   * Where the names of workflows, steps and fields come from, per workflow id, the first source that knows a name
   * winning (./names.ts); a workflow's name as resolved from the rule (`workflow: { name }`) comes before all
   */
  names?: ReadonlyMap<number, readonly NameSource[]>;
}

/**
 * A rollout limit (`limits.max_changes_per_run`): the changes of the oldest instances (by started_time, ties by id;
 * an instance whose start is unknown comes last) up to the limit, an instance's changes kept together; the others
 * are deferred to later runs.
 */
export function rolloutSplit(
  changes: readonly PlannedChange[],
  limit: number,
  startedTimes: ReadonlyMap<number, string>,
): { kept: PlannedChange[]; deferred: PlannedChange[] } {
  const byInstance = new Map<number, PlannedChange[]>();
  for (const c of changes) {
    const list = byInstance.get(c.instance_id);
    if (list) list.push(c);
    else byInstance.set(c.instance_id, [c]);
  }
  const started = (id: number): number => {
    const t = Date.parse(startedTimes.get(id) ?? "");
    return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
  };
  const order = [...byInstance.keys()].sort((a, b) => started(a) - started(b) || a - b);
  const kept: PlannedChange[] = [];
  const deferred: PlannedChange[] = [];
  let full = false;
  for (const id of order) {
    const list = byInstance.get(id) ?? [];
    // once one instance does not fit, the younger ones wait too: the order stays oldest first across runs
    if (!full && kept.length + list.length <= limit) kept.push(...list);
    else {
      full = true;
      deferred.push(...list);
    }
  }
  return { kept, deferred };
}

export function assemblePlan(results: RuleResult[], meta: PlanMeta): Plan {
  const errors: PlanError[] = [...(meta.errors ?? [])];
  const failed = new Set<string>(meta.errors?.flatMap((e) => (e.rule ? [e.rule] : [])) ?? []);
  const candidate: PlannedChange[] = [];
  const reports: PlannedReport[] = [];
  const deferred = new Map<string, PlannedChange[]>();

  for (const r of results) {
    // one by one: a rule may plan 100,000 changes, more than push(...) takes as arguments
    for (const e of r.errors) errors.push(e);
    const limit = r.rule.limits.max_instances;
    const mutating = r.rule.actions.some(isMutating);
    if (limit !== undefined && mutating && r.matched > limit) {
      failed.add(r.rule.name);
      errors.push({
        code: "limit",
        rule: r.rule.name,
        message:
          `rule "${r.rule.name}" matched ${plural(r.matched, "instance")}, above its limit max_instances: ${limit}; ` +
          `none of its changes are planned`,
      });
      continue;
    }
    const rollout = mutating ? r.rule.limits.max_changes_per_run : undefined;
    if (rollout !== undefined && r.changes.length > rollout) {
      const split = rolloutSplit(r.changes, rollout, r.startedTimes);
      for (const c of split.kept) candidate.push(c);
      deferred.set(r.rule.name, split.deferred);
    } else {
      for (const c of r.changes) candidate.push(c);
    }
    for (const [i, action] of r.rule.actions.entries()) {
      const kind = actionKind(action.kind);
      // a report rule that matched nothing still shows, with no groups
      if (!kind.mutating) reports.push(kind.build(r.rule, action, r.reportEntries.get(i) ?? new ReportEntries()));
    }
  }

  // audit changes are never sent, so they cannot clash with what is
  const resolved = resolveConflicts(candidate.filter((c) => c.audit !== true));
  const changes = [...resolved.changes, ...candidate.filter((c) => c.audit === true)];
  const conflictErrors = resolved.errors;
  for (const e of conflictErrors) errors.push(e);
  const order = new Map(results.map((r, i) => [r.rule.name, i]));
  changes.sort(
    (a, b) =>
      (order.get(a.rule) ?? 0) - (order.get(b.rule) ?? 0) ||
      a.instance_id - b.instance_id ||
      kindOrder(a.kind) - kindOrder(b.kind) ||
      (a.step_id ?? 0) - (b.step_id ?? 0),
  );
  const perRule = new Map<string, number>();
  for (const c of changes) perRule.set(c.rule, (perRule.get(c.rule) ?? 0) + 1);

  // names from what the run read anyway: the resolved workflow names first, then the sources the run gathered
  const sources = new Map<number, NameSource[]>();
  for (const r of results) {
    if (r.workflowId === null || !r.workflowName || sources.has(r.workflowId)) continue;
    sources.set(r.workflowId, [{ name: r.workflowName, steps: new Map(), fields: new Map() }]);
  }
  for (const [id, list] of meta.names ?? []) sources.set(id, [...(sources.get(id) ?? []), ...list]);
  const namedRules = results.map((r) => ({ name: r.rule.name, workflowId: r.workflowId, fields: r.rule.fields }));
  // names live in the table only: a rule's entry stays what it was (its workflow_name is the one it was written with)
  const names = namesTable(namedRules, changes, sources);

  const byRule = new Map<string, PlannedChange[]>();
  for (const c of changes) {
    const list = byRule.get(c.rule);
    if (list) list.push(c);
    else byRule.set(c.rule, [c]);
  }
  const rules: RulePlanSummary[] = results.map((r, i) => {
    const named = namedRules[i];
    const fields = named ? aliasesShown(named, byRule.get(r.rule.name) ?? []) : undefined;
    const waiting = deferred.get(r.rule.name) ?? [];
    return {
      name: r.rule.name,
      workflow_id: r.workflowId,
      ...(r.workflowName ? { workflow_name: r.workflowName } : {}),
      selected: r.selected,
      matched: r.matched,
      changes: perRule.get(r.rule.name) ?? 0,
      skipped: r.skipped,
      ...(r.excluded !== undefined ? { excluded: r.excluded } : {}),
      status: r.inactive ? "inactive" : failed.has(r.rule.name) || r.errors.length > 0 ? "failed" : "ok",
      ...(r.inactive
        ? {
            reason: r.inactive.reason,
            ...(r.inactive.next_active_at ? { next_active_at: r.inactive.next_active_at } : {}),
          }
        : {}),
      // added keys last, so a plan reads as before with its additions after
      ...(r.skipReasons.size > 0 ? { skipped_by_reason: Object.fromEntries(r.skipReasons) } : {}),
      ...defined({ fields, workflow_ids: r.workflowIds }),
      ...(r.workflowsSkipped && r.workflowsSkipped.length > 0 ? { workflows_skipped: r.workflowsSkipped } : {}),
      ...(waiting.length > 0
        ? {
            deferred: waiting.length,
            deferred_ids: [...new Set(waiting.map((c) => c.instance_id))].sort((a, b) => a - b),
            max_changes_per_run: r.rule.limits.max_changes_per_run,
          }
        : {}),
    };
  });
  const skipped = results.reduce((n, r) => n + r.skipped, 0);
  const byKind: Record<string, number> = {};
  for (const k of MUTATING_KINDS) byKind[k] = changes.filter((c) => c.kind === k).length;

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
      ...byKind,
      reports: reports.length,
      errors: errors.length,
      ...(skipped > 0 ? { skipped } : {}),
      ...(meta.requests !== undefined ? { requests: meta.requests } : {}),
    },
    ...(names.length > 0 ? { names } : {}),
  };
}
