/**
 * `plan --compare <ref>` in one run (docs/design.md section 12): the touched rules' versions at the ref and in the
 * working tree are planned together, as distinct rules to the query planner, so both versions share every listing,
 * field page and record read of the run (./plan-live.ts). The versions at the ref run under an internal name,
 * `<name> (at <ref>)` (a rule name cannot hold spaces, so it never clashes with a real one), and each version is
 * assembled apart: limits and conflicts are judged within one version, as two separate plans would judge them.
 */
import { assemblePlan, type RuleResult } from "./assemble.js";
import { planResults, type RunPlanOptions } from "./plan-live.js";
import { planImpact, type ComparePlan, type ImpactStatus } from "./impact.js";
import type { CompiledRule } from "../rules/types.js";
import type { Plan, PlanError, PlannedChange } from "../plan/types.js";

export interface CompareSides {
  ref: string;
  commit: string;
  /** the touched rules in the order they are shown, each with what happened to it */
  touched: ReadonlyArray<{ rule: string; status: ImpactStatus }>;
  /** the versions at the ref of the edited and removed rules, under their own names */
  before: readonly CompiledRule[];
  /** rules defined the same at the ref and now (counted, not planned) */
  unchanged: number;
}

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
  const { results, meta } = await planResults({ ...opts, ruleSet: { ...opts.ruleSet, rules: [...opts.ruleSet.rules, ...before] } });
  const isOld = (r: RuleResult): boolean => internal.has(r.rule.name);
  const errorsOf = (old: boolean): PlanError[] => (meta.errors ?? []).filter((e) => (e.rule !== undefined && internal.has(e.rule)) === old);
  const nowPlan = assemblePlan(results.filter((r) => !isOld(r)), { ...meta, errors: errorsOf(false) });
  const oldPlan = assemblePlan(results.filter(isOld), { ...meta, errors: errorsOf(true) });
  // the ref's changes under their own names again, so both versions of a rule meet in the diff
  const oldByName: Plan = {
    ...oldPlan,
    changes: oldPlan.changes.map((c) => renamed(c, c.rule, internal.get(c.rule) ?? c.rule)),
  };
  const impact = planImpact(sides.touched, oldByName, nowPlan);
  const errors = [...nowPlan.errors, ...oldPlan.errors];
  return {
    ...nowPlan,
    errors,
    summary: { ...nowPlan.summary, errors: errors.length },
    compare: { ref: sides.ref, commit: sides.commit, unchanged: sides.unchanged, rules_at_ref: oldPlan.rules.map((r) => ({ ...r, name: internal.get(r.name) ?? r.name })) },
    impact,
  };
}
