/** report: no mutation; a table of the matched instances grouped by one key. */
import type { JsonSchema } from "./schema-types.js";

export const kind = "report" as const;

/** Instance-record keys a report may group by besides a field alias. */
export const GROUP_BY_KEYS = ["tags", "status", "priority", "stage"] as const;

/** Instance-record columns a report may show besides `fields.<alias>`. */
export const RECORD_COLUMNS = [
  "id", "name", "status", "priority", "stage", "tags", "deadline", "started_time", "last_updated_time",
  "completed_time", "aborted_time", "active_step_ids", "visibility_mode", "public_url", "url",
] as const;

export const schema: JsonSchema = {
  type: "object",
  description: "Report the matched instances grouped by a key. Makes no change.",
  properties: {
    report: {
      type: "object",
      description: "Report the matched instances grouped by a key. Makes no change.",
      properties: {
        group_by: {
          type: "string",
          description:
            "Group key: tags (an instance counts under each of its tags; untagged under `(no tag)`), status, " +
            "priority (Regular when none), stage, or `fields.<alias>` / a field alias declared in `fields`.",
        },
        columns: {
          type: "array",
          description: `Columns of the table: ${RECORD_COLUMNS.join(", ")}, or fields.<alias>.`,
          items: { type: "string" },
          minItems: 1,
        },
        title: { type: "string", description: "Heading of the report; the rule name when omitted." },
      },
      required: ["group_by"],
      additionalProperties: false,
    },
  },
  required: ["report"],
  additionalProperties: false,
};
