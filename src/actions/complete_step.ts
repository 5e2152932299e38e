/** complete_step: complete an active step of each matched instance, sending the given inputs. */
import { stepActionSchema } from "./step-inputs.schema.js";

export const kind = "complete_step" as const;

export const schema = stepActionSchema(
  kind,
  "Complete an active step of each matched instance (POST /instances/{id}/complete_step/ with mode complete).",
);
