/**
 * `plan --changed-since`: narrows the rule set to the rules added or edited since the ref, and records the
 * comparison in the plan — `changed_since` and `removed_rules` in the JSON plan (added keys; the contract's keys are
 * untouched), which every plan view shows as a note (src/render/plan/changed-since.ts) so a reviewer sees what the
 * change itself does.
 */
import type { Plan, PlanChangedSince } from "../plan/types.js";
import type { RuleSet } from "../rules/types.js";
import { ruleSelection } from "../rules/index.js";
import type { ChangedSince } from "./changed-since.js";

export type PlanWithChanges = Plan & PlanChangedSince;

/** `only` is the --rule filter (names or globs): when given, the comparison is narrowed to those names too. */
function narrowed(c: ChangedSince, only: string[]): ChangedSince {
  if (only.length === 0) return c;
  const keep = ruleSelection(only).selects;
  return {
    ...c,
    added: c.added.filter(keep),
    changed: c.changed.filter(keep),
    unchanged: c.unchanged.filter(keep),
    removed: c.removed.filter((r) => keep(r.name)),
  };
}

export function changedRuleSet(ruleSet: RuleSet, c: ChangedSince): RuleSet {
  const plan = new Set([...c.added, ...c.changed]);
  return { ...ruleSet, rules: ruleSet.rules.filter((r) => plan.has(r.name)) };
}

export function withChangedSince(plan: Plan, changes: ChangedSince, only: string[] = []): PlanWithChanges {
  const c = narrowed(changes, only);
  return {
    ...plan,
    changed_since: { ref: c.ref, commit: c.commit, added: c.added, changed: c.changed, unchanged: c.unchanged },
    removed_rules: c.removed,
  };
}
