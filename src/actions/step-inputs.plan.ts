/**
 * Planning shared by complete_step and save_step: both POST /instances/{id}/complete_step/ with the rule's inputs
 * evaluated for the instance; they differ only in `mode` and in what happens to the step.
 */
import type { CompiledAction, CompiledRule } from "../rules/types.js";
import { evalValue } from "../engine/evaluate.js";
import { fieldKey, plainValue } from "../engine/field-values.js";
import { sameValue } from "../model/values.js";
import type { ActionOutcome, ActionPlanInput } from "./types.js";

type StepAction = Extract<CompiledAction, { kind: "complete_step" | "save_step" }>;

/** The name a reviewer knows a field by: its alias in this rule when it has one, else its action id. */
export function fieldLabel(rule: CompiledRule, step: number, action: number): string {
  for (const [alias, ref] of Object.entries(rule.fields)) {
    if (ref.step === step && ref.action === action) return `fields.${alias}`;
  }
  return `action ${action}`;
}

export async function planStepAction(
  input: ActionPlanInput<StepAction>,
  mode: "complete" | "save",
): Promise<ActionOutcome> {
  const { rule, action, data, ctx, bindings } = input;
  if (data.status !== "running") return { skipped: `instance is ${data.status}` };
  const active = data.record?.active_step_ids;
  const inactive = active ? !active.includes(action.step) : data.stepActive?.get(action.step) === false;
  if (inactive) return { skipped: `step ${action.step} is not active` };

  const actions: Array<{ action_id: number; input_object: unknown }> = [];
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  if (mode === "complete") {
    before[`step ${action.step}`] = "active";
    after[`step ${action.step}`] = "completed";
  }
  let alreadyHeld = mode === "save" && action.inputs.length > 0;
  for (const inp of action.inputs) {
    const value = await evalValue(inp.value, ctx, bindings);
    actions.push({ action_id: inp.action, input_object: value });
    const label = fieldLabel(rule, action.step, inp.action);
    const key = fieldKey(action.step, inp.action);
    // "before" only when hydration read it; an unread value is left out rather than guessed
    if (data.values.has(key)) before[label] = plainValue(data.values.get(key)) ?? null;
    after[label] = plainValue(value) ?? null;
    // by meaning: a service may echo 12.5 as "12.50", a date with "+00:00", a checklist in another order
    alreadyHeld &&= data.values.has(key) && sameValue(data.values.get(key), value);
  }
  // a save whose every value already holds changes nothing: leaving it out keeps scheduled runs idempotent
  if (alreadyHeld) {
    return { skipped: `step ${action.step} already holds these values` };
  }
  const kind = mode === "complete" ? "complete_step" : "save_step";
  return {
    change: {
      id: `${rule.name}:${kind}:${data.id}:${action.step}`,
      rule: rule.name,
      instance_id: data.id,
      instance_name: data.name,
      process_id: data.process_id,
      kind,
      step_id: action.step,
      request: {
        method: "POST",
        path: `/instances/${data.id}/complete_step/`,
        body: { step_id: action.step, actions, mode },
      },
      before,
      after,
      precondition: {
        status: "running",
        active_step_id: action.step,
        ...(data.record?.last_updated_time ? { last_updated_time: data.record.last_updated_time } : {}),
      },
    },
  };
}
