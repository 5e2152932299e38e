/** save_step: save data in an active step without completing it (same request as complete_step, mode save). */
import { stepActionSchema } from "./step-inputs.schema.js";
import { planStepAction } from "./step-inputs.plan.js";
import type { ActionOutcome, ActionPlanInput, KindPresentation } from "./types.js";
import type { CompiledAction } from "../rules/types.js";

export const kind = "save_step" as const;

export const schema = stepActionSchema(
  kind,
  "Save data in an active step of each matched instance without completing it (complete_step with mode save).",
);

export const presentation: KindPresentation = {
  symbol: "~",
  legend: "save data in a step",
  summary: (n) => `${n} to save`,
  colour: "yellow",
};

export function plan(input: ActionPlanInput<Extract<CompiledAction, { kind: "save_step" }>>): Promise<ActionOutcome> {
  return planStepAction(input, "save");
}
