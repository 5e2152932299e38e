/**
 * Collects per-instance outcomes into per-rule results while pages stream by, then assembles the plan: limits,
 * conflicts, stable ordering and the summary. Pure: the same outcomes always give the same plan.
 */
import type { CompiledRule } from "../rules/types.js";
import { defined } from "../model/defined.js";
import { actionKind, isMutating, MUTATING_KINDS, ReportEntries } from "../actions/index.js";
import type { InstanceOutcome } from "./evaluate-instance.js";
import type { Plan, PlanError, PlannedChange, PlannedReport, RulePlanSummary } from "../plan/types.js";
import { aliasesOf, namesTableOf, type NameFact, type NameSource } from "./names.js";
import { plural } from "../text/plural.js";
import { ChangeStore } from "./change-store.js";
import { ChangeRefs, orderedChanges, rolloutOrder } from "./assemble-changes.js";
import { lazyChanges } from "../plan/lazy-changes.js";
import { ChangeCounter } from "../plan/change-counts.js";
import type { SpillOptions } from "../fs/spill-bytes.js";

export interface RuleResult {
  rule: CompiledRule;
  workflowId: number | null;
  workflowName?: string;
  selected: number;
  matched: number;
  skipped: number;
  /** `skipped` by the reason the action kind gave, in the order first met */
  skipReasons: Map<string, number>;
  /** held compactly from the moment they are added (./change-store.ts) */
  changes: ChangeStore;
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

export function newRuleResult(
  rule: CompiledRule,
  workflowId: number | null,
  workflowName?: string,
  spill?: SpillOptions,
): RuleResult {
  return {
    rule,
    workflowId,
    ...(workflowName ? { workflowName } : {}),
    selected: 0,
    matched: 0,
    skipped: 0,
    skipReasons: new Map(),
    changes: new ChangeStore(spill),
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
  for (const c of outcome.changes) result.changes.add(c);
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
  const { kept, deferred } = rolloutOrder(changes.length, (k) => changes[k]?.instance_id ?? 0, limit, startedTimes);
  const at = (k: number): PlannedChange => changes[k] as PlannedChange;
  return { kept: kept.map(at), deferred: deferred.map(at) };
}

export function assemblePlan(results: RuleResult[], meta: PlanMeta): Plan {
  const errors: PlanError[] = [...(meta.errors ?? [])];
  const failed = new Set<string>(meta.errors?.flatMap((e) => (e.rule ? [e.rule] : [])) ?? []);
  // changes by position in their rule's store: none is made to be chosen, ordered or counted (./assemble-changes.ts)
  const candidate = new ChangeRefs(results.map((r) => r.changes));
  const reports: PlannedReport[] = [];
  const deferred = new Map<string, { store: ChangeStore; items: number[] }>();

  results.forEach((r, ri) => {
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
      return;
    }
    const store = r.changes;
    const rollout = mutating ? r.rule.limits.max_changes_per_run : undefined;
    if (rollout !== undefined && store.length > rollout) {
      const split = rolloutOrder(store.length, (i) => store.instanceAt(i), rollout, r.startedTimes);
      for (const i of split.kept) candidate.push(ri, i);
      deferred.set(r.rule.name, { store, items: split.deferred });
    } else {
      for (let i = 0; i < store.length; i++) candidate.push(ri, i);
    }
    for (const [i, action] of r.rule.actions.entries()) {
      const kind = actionKind(action.kind);
      // a report rule that matched nothing still shows, with no groups
      if (!kind.mutating) reports.push(kind.build(r.rule, action, r.reportEntries.get(i) ?? new ReportEntries()));
    }
  });

  const order = new Map(results.map((r, i) => [r.rule.name, i]));
  const resolved = orderedChanges(candidate, (rule) => order.get(rule) ?? 0);
  const changes = resolved.changes;
  for (const e of resolved.errors) errors.push(e);
  const perRule = new Map<string, number>();
  const byKind: Record<string, number> = {};
  for (const k of MUTATING_KINDS) byKind[k] = 0;
  // what the names read of the changes: one fact per rule and kind of change, in plan order (aliases are placed in
  // the order their first change shows them)
  const factsByRule = new Map<string, NameFact[]>();
  const factsSeen = results.map(() => new Set<string>());
  // what the end of a run counts (summary line, notification, views) without making a change (src/plan/change-counts.ts)
  const counter = new ChangeCounter();
  for (let k = 0; k < changes.length; k++) {
    const store = changes.storeAt(k);
    const i = changes.itemAt(k);
    const rule = store.ruleAt(i);
    perRule.set(rule, (perRule.get(rule) ?? 0) + 1);
    const kind = store.kindAt(i);
    counter.add(rule, kind, store.auditAt(i));
    if (Object.hasOwn(byKind, kind)) byKind[kind] = (byKind[kind] ?? 0) + 1;
    const seen = factsSeen[changes.storeIndexAt(k)];
    const key = `${store.shapeIdAt(i)}:${rule}`;
    if (!seen || seen.has(key)) continue;
    seen.add(key);
    const list = factsByRule.get(rule) ?? [];
    if (list.length === 0) factsByRule.set(rule, list);
    list.push({ rule, ...store.shape(store.shapeIdAt(i)) });
  }

  // names from what the run read anyway: the resolved workflow names first, then the sources the run gathered
  const sources = new Map<number, NameSource[]>();
  for (const r of results) {
    if (r.workflowId === null || !r.workflowName || sources.has(r.workflowId)) continue;
    sources.set(r.workflowId, [{ name: r.workflowName, steps: new Map(), fields: new Map() }]);
  }
  for (const [id, list] of meta.names ?? []) sources.set(id, [...(sources.get(id) ?? []), ...list]);
  const namedRules = results.map((r) => ({ name: r.rule.name, workflowId: r.workflowId, fields: r.rule.fields }));
  // names live in the table only: a rule's entry stays what it was (its workflow_name is the one it was written with)
  const names = namesTableOf(namedRules, [...factsByRule.values()].flat(), sources);

  const rules: RulePlanSummary[] = results.map((r, i) => {
    const named = namedRules[i];
    const fields = named ? aliasesOf(named, factsByRule.get(r.rule.name) ?? []) : undefined;
    const waiting = deferred.get(r.rule.name);
    const waitingIds = waiting ? waiting.items.map((d) => waiting.store.instanceAt(d)) : [];
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
      ...(waitingIds.length > 0
        ? {
            deferred: waitingIds.length,
            deferred_ids: [...new Set(waitingIds)].sort((a, b) => a - b),
            max_changes_per_run: r.rule.limits.max_changes_per_run,
          }
        : {}),
    };
  });
  const skipped = results.reduce((n, r) => n + r.skipped, 0);
  return {
    format_version: 1,
    flowrules_version: meta.version,
    created_at: meta.createdAt.toISOString(),
    base_url: meta.baseUrl,
    rules_digest: meta.rulesDigest,
    rules,
    // made as they are read, a batch at a time by the writer and the digest (src/plan/lazy-changes.ts)
    // what the key's mask asks without making them: every store (a superset of the plan's changes) searched
    changes: lazyChanges(
      changes.length,
      (k) => changes.changeAt(k),
      counter.counts(),
      (search) => changes.stores.some((s) => s.mayHold(search)),
    ),
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
