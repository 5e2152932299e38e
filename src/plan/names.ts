/**
 * Names beside ids (docs/design.md, "Names in a plan"): the plan's `names` table read back for the views, and the keys
 * of a change's before/after, which name a step (`step <id>`), a form field (`action <id>`) or a field by its rule's
 * alias (`fields.<alias>`). A view asks here and shows the id alone where no name is known: a plan written before
 * names existed reads as it always did.
 */
import type { RulePlanSummary, WorkflowNames } from "./types.js";

/** What a before/after key refers to; undefined for a key of another shape (`status`). */
export type ValueKey = { step: number } | { field: number } | { alias: string };

export function valueKey(key: string): ValueKey | undefined {
  const step = /^step (\d+)$/.exec(key);
  if (step) return { step: Number(step[1]) };
  const field = /^action (\d+)$/.exec(key);
  if (field) return { field: Number(field[1]) };
  if (key.startsWith("fields.") && key.length > "fields.".length) return { alias: key.slice("fields.".length) };
  return undefined;
}

/** The names a plan carries, looked up by id. Every answer may be undefined: then the id is shown alone. */
export interface PlanNames {
  workflow(id: number | null | undefined): string | undefined;
  step(workflowId: number | undefined, stepId: number | undefined): string | undefined;
  field(workflowId: number | undefined, fieldId: number): string | undefined;
  /** the field a rule's alias stands for, as its plan entry says */
  alias(rule: string, alias: string): { step: number; action: number } | undefined;
  /** the workflow a rule of the plan acts on */
  ruleWorkflow(rule: string): number | undefined;
}

/** No names at all: what a view uses for data that carries none (a plan written before plans carried names). */
export const NO_NAMES: PlanNames = {
  workflow: () => undefined,
  step: () => undefined,
  field: () => undefined,
  alias: () => undefined,
  ruleWorkflow: () => undefined,
};

/** What names are read from: a plan (its `rules` and `names`), or a view's data of the same shape (`explain`). */
type NamedRule = Pick<RulePlanSummary, "name" | "workflow_id" | "workflow_name" | "fields">;
type NamedPlan = {
  rules: readonly NamedRule[];
  names?: readonly WorkflowNames[];
  compare?: { rules_at_ref: readonly NamedRule[] };
};

export function planNames(plan: NamedPlan): PlanNames {
  const table = new Map((plan.names ?? []).map((w) => [w.workflow_id, w]));
  const rules = new Map<string, NamedRule>();
  // a rule removed since the ref (plan --compare) is known only by its version at the ref
  for (const r of plan.compare?.rules_at_ref ?? []) rules.set(r.name, r);
  for (const r of plan.rules) rules.set(r.name, r);
  const own = (o: Record<string, string> | undefined, id: number): string | undefined =>
    o !== undefined && Object.hasOwn(o, String(id)) ? o[String(id)] : undefined;
  return {
    workflow: (id) => {
      if (id === null || id === undefined) return undefined;
      const named = table.get(id)?.name;
      if (named !== undefined) return named;
      for (const r of rules.values()) if (r.workflow_id === id && r.workflow_name !== undefined) return r.workflow_name;
      return undefined;
    },
    step: (wf, id) => (wf === undefined || id === undefined ? undefined : own(table.get(wf)?.steps, id)),
    field: (wf, id) => (wf === undefined ? undefined : own(table.get(wf)?.fields, id)),
    alias: (rule, alias) => {
      const fields = rules.get(rule)?.fields;
      return fields !== undefined && Object.hasOwn(fields, alias) ? fields[alias] : undefined;
    },
    ruleWorkflow: (rule) => rules.get(rule)?.workflow_id ?? undefined,
  };
}
