/**
 * Names beside ids in every view (docs/design.md, "Names in a plan"): `complete step 20111 "Manager approval"`,
 * `Amount (50230): 120 → 95`, `workflow 1042 Expense claim`. The words come from the plan's `names` (src/plan/names.ts);
 * where it names nothing the id shows alone. What these return is raw data: each view escapes it for its medium.
 */
import { mutatingKind, type ChangeDescription } from "../../actions/index.js";
import { NO_NAMES, valueKey, type PlanNames } from "../../plan/names.js";
import type { PlannedChange } from "../../plan/types.js";

export { NO_NAMES, planNames, type PlanNames } from "../../plan/names.js";

/** What a name lookup needs of a change: its rule, and its workflow when it carries one. */
export interface ChangeRef {
  rule: string;
  process_id?: number;
  step_id?: number;
}

function workflowOf(names: PlanNames, c: ChangeRef): number | undefined {
  return c.process_id ?? names.ruleWorkflow(c.rule);
}

/** The step a change acts on, by name, when the plan knows it. */
export function stepName(names: PlanNames, c: ChangeRef): string | undefined {
  return names.step(workflowOf(names, c), c.step_id);
}

/** A change's words, its step named: `complete step 20111 "Manager approval"` (the kind's own words, src/actions). */
export function describeNamed(change: PlannedChange, names: PlanNames = NO_NAMES): ChangeDescription {
  const step = stepName(names, change);
  return mutatingKind(change.kind).describe(change, step !== undefined ? { step } : {});
}

/**
 * A before/after key as people read it: `step 20111 "Manager approval"`, `Amount (50230)` (a field by its id or by
 * its rule's alias); the key itself when the plan names nothing for it.
 */
export function keyLabel(names: PlanNames, c: ChangeRef, key: string): string {
  const k = valueKey(key);
  if (!k) return key;
  const wf = workflowOf(names, c);
  if ("step" in k) {
    const name = names.step(wf, k.step);
    return name !== undefined ? `${key} ${JSON.stringify(name)}` : key;
  }
  const id = "field" in k ? k.field : names.alias(c.rule, k.alias)?.action;
  const name = id !== undefined ? names.field(wf, id) : undefined;
  return name !== undefined && id !== undefined ? `${name} (${id})` : key;
}

/** `1042 Expense claim`, or `1042` when the workflow has no known name (`known`: the rule's own `workflow_name`). */
export function workflowCell(names: PlanNames, id: number, known?: string): string {
  const name = known ?? names.workflow(id);
  return name !== undefined ? `${id} ${name}` : `${id}`;
}

/** `workflow 1042 Expense claim`, or `workflow 1042` when it has no known name. */
export function workflowLabel(names: PlanNames, id: number, known?: string): string {
  return `workflow ${workflowCell(names, id, known)}`;
}
