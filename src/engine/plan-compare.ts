/**
 * `plan --compare <ref>` in one run (docs/contracts.md, "What a rule edit changes"): the touched rules' versions at the ref and in the
 * working tree are planned together, as distinct rules to the query planner, so both versions share every listing,
 * field page and record read of the run (./plan-live.ts). The versions at the ref run under an internal name,
 * `<name> (at <ref>)` (a rule name cannot hold spaces, so it never clashes with a real one), and each version is
 * assembled apart, with the untouched rules it may clash with: limits and conflicts are judged within one version,
 * as two separate plans of the whole rule set would judge them.
 */
import { assemblePlan, type RuleResult } from "./assemble.js";
import { planResults, type RunPlanOptions } from "./plan-live.js";
import { planImpact, type ComparePlan } from "./impact.js";
import type { CompareSides } from "../ci/compare.js";
import type { CompiledRule } from "../rules/types.js";
import type { Plan, PlanError, PlannedChange } from "../plan/types.js";
import { isMutating, MUTATING_KINDS } from "../actions/index.js";
import { mergeNames } from "./names.js";

/** The name a rule's version at the ref runs under. */
export function atRefName(rule: string, ref: string): string {
  return `${rule} (at ${ref})`;
}

function renamed(c: PlannedChange, from: string, to: string): PlannedChange {
  return { ...c, rule: to, id: c.id.startsWith(`${from}:`) ? `${to}${c.id.slice(from.length)}` : c.id };
}

/**
 * Plans `opts.ruleSet` (the working tree's added and edited rules) and `sides.before` in one run and returns the plan
 * of the working tree's rules with the impact of every touched rule. Errors of either version are the run's errors;
 * those of a version at the ref name it `<name> (at <ref>)`.
 */
export async function runCompare(opts: RunPlanOptions, sides: CompareSides): Promise<ComparePlan> {
  const internal = new Map<string, string>();
  const before = sides.before.map((r) => {
    const name = atRefName(r.name, sides.ref);
    internal.set(name, r.name);
    return { ...r, name };
  });
  const context = conflictContext(sides.untouched ?? [], [...opts.ruleSet.rules, ...sides.before]);
  const contextNames = new Set(context.map((r) => r.name));
  const { results, meta } = await planResults({
    ...opts,
    ruleSet: { ...opts.ruleSet, rules: [...opts.ruleSet.rules, ...context, ...before] },
  });
  const isOld = (r: RuleResult): boolean => internal.has(r.rule.name);
  const isContext = (r: RuleResult): boolean => contextNames.has(r.rule.name);
  const errorsOf = (old: boolean): PlanError[] =>
    (meta.errors ?? []).filter((e) => (e.rule !== undefined && internal.has(e.rule)) === old);
  // each version with the untouched rules it may clash with, in its own files' order (conflicts name the rules in
  // that order), as the whole rule set's plan would judge it
  const inOrder = (list: RuleResult[], order: readonly string[] = []): RuleResult[] => {
    const rank = new Map(order.map((n, i) => [n, i]));
    const at = (r: RuleResult): number => rank.get(internal.get(r.rule.name) ?? r.rule.name) ?? order.length;
    return [...list].sort((a, b) => at(a) - at(b));
  };
  const nowPlan = assemblePlan(
    inOrder(
      results.filter((r) => !isOld(r)),
      sides.order?.now,
    ),
    { ...meta, errors: errorsOf(false) },
  );
  const oldPlan = assemblePlan(
    inOrder(
      results.filter((r) => isOld(r) || isContext(r)),
      sides.order?.atRef,
    ),
    { ...meta, errors: errorsOf(true) },
  );
  const oldNames = [...internal.keys()];
  // an error among untouched rules alone is in both versions' plans: it is reported once, with the working tree's
  const oldErrors = oldPlan.errors.filter(
    (e) => (e.rule !== undefined && internal.has(e.rule)) || oldNames.some((n) => e.message.includes(`"${n}"`)),
  );
  const oldTouched = (c: PlannedChange): boolean => internal.has(c.rule);
  // the ref's changes under their own names again, so both versions of a rule meet in the diff
  const oldByName: Plan = {
    ...oldPlan,
    // the rules too: what each version's rollout limit deferred is read from its rule's summary
    rules: oldPlan.rules.map((r) => ({ ...r, name: internal.get(r.name) ?? r.name })),
    changes: oldPlan.changes.filter(oldTouched).map((c) => renamed(c, c.rule, internal.get(c.rule) ?? c.rule)),
  };
  const impact = planImpact(sides.touched, oldByName, nowPlan);
  const errors = [...nowPlan.errors, ...oldErrors];
  // the plan shown and saved is the working tree's touched rules only (the untouched ones took part in conflicts)
  const changes = nowPlan.changes.filter((c) => !contextNames.has(c.rule));
  const byKind: Record<string, number> = {};
  for (const k of MUTATING_KINDS) byKind[k] = changes.filter((c) => c.kind === k).length;
  // the impact shows the ref's changes too: their steps and fields are named as the working tree's are
  const names = mergeNames(nowPlan.names, oldPlan.names);
  return {
    ...nowPlan,
    ...(names && names.length > 0 ? { names } : {}),
    rules: nowPlan.rules.filter((r) => !contextNames.has(r.name)),
    changes,
    reports: nowPlan.reports.filter((r) => !contextNames.has(r.rule)),
    errors,
    summary: { ...nowPlan.summary, ...byKind, errors: errors.length },
    compare: {
      ref: sides.ref,
      commit: sides.commit,
      unchanged: sides.unchanged,
      rules_at_ref: oldPlan.rules
        .filter((r) => internal.has(r.name))
        .map((r) => ({ ...r, name: internal.get(r.name) ?? r.name })),
    },
    impact,
  };
}

const mutating = (r: CompiledRule): boolean => r.actions.some(isMutating);

/**
 * The untouched rules a touched rule's changes may clash with (docs/ci.md, "What a rule edit changes"): conflicts are
 * judged per instance, so only mutating rules of a workflow a touched mutating rule acts on (a workflow named rather
 * than numbered may be any). They are planned once, for both versions, and show no impact of their own.
 */
export function conflictContext(untouched: readonly CompiledRule[], touched: readonly CompiledRule[]): CompiledRule[] {
  const acting = touched.filter(mutating);
  if (acting.length === 0) return [];
  const ids = new Set(acting.flatMap((r) => ("id" in r.workflow ? [r.workflow.id] : [])));
  // a rule over several workflows may meet any rule: counted like one named by name (resolved only live)
  const anyName = acting.some((r) => !("id" in r.workflow) || r.workflows !== undefined);
  return untouched.filter(
    (r) => mutating(r) && (anyName || !("id" in r.workflow) || r.workflows !== undefined || ids.has(r.workflow.id)),
  );
}
