/** complete_step: complete an active step of each matched instance, sending the given inputs. */
import { stepActionSchema } from "./step-inputs.schema.js";
import { planStepAction } from "./step-inputs.plan.js";
import type { ActionOutcome, ActionPlanInput, KindPresentation } from "./types.js";
import type { CompiledAction } from "../rules/types.js";

export const kind = "complete_step" as const;

export const schema = stepActionSchema(
  kind,
  "Complete an active step of each matched instance (POST /instances/{id}/complete_step/ with mode complete).",
);

export const presentation: KindPresentation = {
  symbol: "✓",
  legend: "complete a step",
  summary: (n) => `${n} ${n === 1 ? "step" : "steps"} to complete`,
  colour: "green",
};

export function plan(input: ActionPlanInput<Extract<CompiledAction, { kind: "complete_step" }>>): Promise<ActionOutcome> {
  return planStepAction(input, "complete");
}
