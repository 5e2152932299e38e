/** The subset of JSON Schema (draft 2020-12) the action fragments and the assembled rule-file schema use. */
export type JsonSchema = { [key: string]: unknown };

/**
 * A step or form-field reference: its id, or its name as the workflow shows it (resolved against the workflow's
 * structure at plan time, and by validate when the workflow catalog is present; see docs/workflows.md).
 */
export function idOrName(description: string): JsonSchema {
  return {
    description,
    anyOf: [
      { type: "integer", minimum: 1 },
      { type: "string", minLength: 1 },
    ],
  };
}
