/**
 * The plan's assembly as it was before changes were held compactly (src/engine/assemble.ts, conflicts.ts, names.ts
 * at the time): every change an object in plain arrays, conflicts judged over them, the names read from them. The
 * reference the compact assembly is compared with (test/engine/change-store.property.test.ts).
 */
import {
  actionKind,
  isMutating,
  kindOrder,
  mutatingKind,
  MUTATING_KINDS,
  ReportEntries,
} from "../../src/actions/index.js";
import type { ChangeTarget } from "../../src/actions/index.js";
import { defined } from "../../src/model/defined.js";
import type { PlanMeta, RuleResult } from "../../src/engine/assemble.js";
import type { AlsoShown, NamedRule, NameSource } from "../../src/engine/names.js";
import { valueKey } from "../../src/plan/names.js";
import type {
  Plan,
  PlanError,
  PlannedChange,
  PlannedReport,
  RulePlanSummary,
  WorkflowNames,
} from "../../src/plan/types.js";
import type { FieldRef } from "../../src/rules/types.js";
import { plural } from "../../src/text/plural.js";

/** A rule's result with its changes as objects in an array. */
export type ReferenceResult = Omit<RuleResult, "changes"> & { changes: PlannedChange[] };

function rolloutSplit(
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

export function referencePlan(results: ReferenceResult[], meta: PlanMeta): Plan {
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

function targetOf(c: PlannedChange): ChangeTarget {
  return mutatingKind(c.kind).changeTarget(c);
}

function describe(c: PlannedChange): string {
  return mutatingKind(c.kind).describe(c).effect;
}

interface Seen {
  change: PlannedChange;
  /** its position in the instance's list: the earliest met is the one an error names */
  at: number;
}

/**
 * The changes of one instance, in plan order: which clash (all of them are left out) and one error for each change
 * that clashes with an earlier one, naming the earliest. Bucketed by target, not compared pair by pair: 2,000 rules
 * changing one step of one instance cost 2,000 look-ups, not 2 million comparisons and errors.
 */
function instanceConflicts(list: PlannedChange[], dropped: Set<PlannedChange>, errors: PlanError[]): void {
  // whether a change clashes depends on the whole list: what each target holds is counted first
  const perStep = new Map<number, number>();
  const perKind = new Map<string, number>();
  for (const c of list) {
    const t = targetOf(c);
    if (t === "instance") perKind.set(c.kind, (perKind.get(c.kind) ?? 0) + 1);
    else perStep.set(t.step, (perStep.get(t.step) ?? 0) + 1);
  }
  let firstStep: Seen | undefined;
  const firstOfStep = new Map<number, Seen>();
  const firstOfKind = new Map<string, Seen>();
  list.forEach((change, at) => {
    const t = targetOf(change);
    let met: Seen | undefined;
    const meets = (s: Seen | undefined): void => {
      if (s && (!met || s.at < met.at)) met = s;
    };
    if (t === "instance") {
      meets(firstStep);
      for (const [kind, s] of firstOfKind) if (kind !== change.kind) meets(s);
      const repeated = firstOfKind.has(change.kind);
      // the same whole-instance change planned again (two rules aborting one instance) agrees: sent once
      if (repeated || perStep.size > 0 || perKind.size > 1) dropped.add(change);
      if (!repeated) firstOfKind.set(change.kind, { change, at });
    } else {
      meets(firstOfStep.get(t.step));
      for (const s of firstOfKind.values()) meets(s);
      if ((perStep.get(t.step) ?? 0) > 1 || perKind.size > 0) dropped.add(change);
      if (!firstOfStep.has(t.step)) firstOfStep.set(t.step, { change, at });
      firstStep ??= { change, at };
    }
    const a = (met as Seen | undefined)?.change;
    if (!a) return;
    errors.push({
      code: "conflict",
      rule: a.rule,
      instance_id: a.instance_id,
      message: `conflict on instance ${a.instance_id}: rule "${a.rule}" ${describe(a)} and rule "${change.rule}" ${describe(change)}; neither change is planned`,
    });
  });
}

function resolveConflicts(changes: PlannedChange[]): { changes: PlannedChange[]; errors: PlanError[] } {
  const byInstance = new Map<number, PlannedChange[]>();
  for (const c of changes) {
    const list = byInstance.get(c.instance_id);
    if (list) list.push(c);
    else byInstance.set(c.instance_id, [c]);
  }
  const dropped = new Set<PlannedChange>();
  const errors: PlanError[] = [];
  for (const list of byInstance.values()) if (list.length > 1) instanceConflicts(list, dropped, errors);
  return { changes: changes.filter((c) => !dropped.has(c)), errors };
}

function aliasesShown(rule: NamedRule, changes: readonly PlannedChange[]): Record<string, FieldRef> | undefined {
  const out: Record<string, FieldRef> = {};
  for (const c of changes) {
    if (c.rule !== rule.name) continue;
    for (const key of [...Object.keys(c.before), ...Object.keys(c.after)]) {
      const k = valueKey(key);
      if (!k || !("alias" in k) || Object.hasOwn(out, k.alias) || !Object.hasOwn(rule.fields, k.alias)) continue;
      const ref = rule.fields[k.alias];
      if (ref && ref.step >= 0 && ref.action >= 0) out[k.alias] = { step: ref.step, action: ref.action };
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
function namesTable(
  rules: readonly NamedRule[],
  changes: readonly PlannedChange[],
  sources: ReadonlyMap<number, readonly NameSource[]>,
  also: readonly AlsoShown[] = [],
): WorkflowNames[] {
  const wanted = new Map<number, { steps: Set<number>; fields: Set<number> }>();
  const want = (wf: number): { steps: Set<number>; fields: Set<number> } => {
    let w = wanted.get(wf);
    if (!w) wanted.set(wf, (w = { steps: new Set(), fields: new Set() }));
    return w;
  };
  const ruleOf = new Map(rules.map((r) => [r.name, r]));
  for (const r of rules) if (r.workflowId !== null) want(r.workflowId);
  for (const a of also) {
    const w = want(a.workflowId);
    for (const s of a.steps) w.steps.add(s);
    for (const f of a.fields) w.fields.add(f);
  }
  for (const c of changes) {
    const w = want(c.process_id);
    if (c.step_id !== undefined) w.steps.add(c.step_id);
    for (const key of [...Object.keys(c.before), ...Object.keys(c.after)]) {
      const k = valueKey(key);
      if (!k) continue;
      if ("step" in k) w.steps.add(k.step);
      else if ("field" in k) w.fields.add(k.field);
      else {
        const ref = ruleOf.get(c.rule)?.fields[k.alias];
        if (ref && ref.action >= 0) w.fields.add(ref.action);
      }
    }
  }
  const out: WorkflowNames[] = [];
  for (const wf of [...wanted.keys()].sort((a, b) => a - b)) {
    const list = sources.get(wf) ?? [];
    const w = wanted.get(wf) ?? { steps: new Set<number>(), fields: new Set<number>() };
    const name = list.find((s) => s.name !== undefined)?.name;
    const pick = (
      ids: Set<number>,
      of: (s: NameSource) => ReadonlyMap<number, string>,
    ): Record<string, string> | undefined => {
      const named: Record<string, string> = {};
      for (const id of [...ids].sort((a, b) => a - b)) {
        const found = list
          .map(of)
          .find((m) => m.has(id))
          ?.get(id);
        if (found !== undefined) named[String(id)] = found;
      }
      return Object.keys(named).length > 0 ? named : undefined;
    };
    const steps = pick(w.steps, (s) => s.steps);
    const fields = pick(w.fields, (s) => s.fields);
    if (name === undefined && !steps && !fields) continue;
    out.push({
      workflow_id: wf,
      ...defined({ name, steps, fields }),
    });
  }
  return out;
}
