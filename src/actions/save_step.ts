/** save_step: save data in an active step without completing it (same request as complete_step, mode save). */
import { stepActionSchema } from "./step-inputs.schema.js";

export const kind = "save_step" as const;

export const schema = stepActionSchema(
  kind,
  "Save data in an active step of each matched instance without completing it (complete_step with mode save).",
);
