import type { JsonSchema } from "./schema-types.js";

/** Shared by complete_step and save_step: both send the same `actions` body to POST /instances/{id}/complete_step/. */
export function stepActionSchema(kind: "complete_step" | "save_step", description: string): JsonSchema {
  return {
    type: "object",
    description,
    properties: {
      [kind]: {
        type: "object",
        description,
        properties: {
          step: {
            type: "integer",
            minimum: 1,
            description: "Id of the step to act on. It must be active in the instance when the plan is applied.",
          },
          inputs: {
            type: "array",
            description: "Form-field values to send with the step, as `actions` of the complete_step request.",
            items: {
              type: "object",
              properties: {
                action: {
                  type: "integer",
                  minimum: 1,
                  description: "Id of the form field (action_id), as found in the workflow editor.",
                },
                value: {
                  description:
                    "The field's input_object, in the service's form: text and number `{ inputValue: v }`, date " +
                    "`{ date: ISO }`, radio `{ inputValue: { radioItemSelected: A } }`, checklist " +
                    "`{ inputValue: { itemsChecked: [...], itemsNotChecked: [...] } }`. Any string may hold " +
                    "`{{ jsonata }}` templates, evaluated per instance.",
                },
              },
              required: ["action", "value"],
              additionalProperties: false,
            },
          },
        },
        required: ["step"],
        additionalProperties: false,
      },
    },
    required: [kind],
    additionalProperties: false,
  };
}
