/** report: no mutation; a table of the matched instances grouped by one key. */
import type { JsonSchema } from "./schema-types.js";
import type { ActionPlanInput } from "./types.js";
import type { CompiledAction, CompiledRule } from "../rules/types.js";
import type { PlannedReport, ReportGroup } from "../plan/types.js";

export const kind = "report" as const;

/** Instance-record keys a report may group by besides a field alias. */
export const GROUP_BY_KEYS = ["tags", "status", "priority", "stage"] as const;

/** Instance-record columns a report may show besides `fields.<alias>`. */
export const RECORD_COLUMNS = [
  "id", "name", "status", "priority", "stage", "tags", "deadline", "started_time", "last_updated_time",
  "completed_time", "aborted_time", "active_step_ids", "visibility_mode", "public_url", "url",
] as const;

export const NO_TAG = "(no tag)";
export const NO_VALUE = "(no value)";
export const REGULAR_PRIORITY = "Regular";

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

type ReportAction = Extract<CompiledAction, { kind: "report" }>;

/** One matched instance as the report sees it: the group keys it counts under and its row. */
export interface ReportEntry {
  instance_id: number;
  keys: string[];
  row: Record<string, unknown>;
}

function groupKeys(value: unknown, none: string): string[] {
  if (value === undefined || value === null || value === "") return [none];
  if (Array.isArray(value)) return value.length === 0 ? [none] : [...new Set(value.map((v) => String(v)))];
  return [typeof value === "object" ? JSON.stringify(value) : String(value)];
}

function columnValue(column: string, input: ActionPlanInput<ReportAction>): unknown {
  if (column.startsWith("fields.")) return input.ctx.fields[column.slice("fields.".length)];
  return input.ctx.instance[column];
}

export function entry(input: ActionPlanInput<ReportAction>): ReportEntry {
  const { action, ctx, data } = input;
  let keys: string[];
  switch (action.group_by) {
    case "tags":
      keys = groupKeys(ctx.tags, NO_TAG);
      break;
    case "status":
      keys = [data.status];
      break;
    case "priority":
      keys = groupKeys(data.record?.priority, REGULAR_PRIORITY);
      break;
    case "stage":
      keys = groupKeys(data.record?.stage, "(no stage)");
      break;
    default:
      keys = groupKeys(ctx.fields[action.group_by.replace(/^fields\./, "")], NO_VALUE);
  }
  const row: Record<string, unknown> = {};
  for (const c of action.columns) row[c] = columnValue(c, input) ?? null;
  return { instance_id: data.id, keys, row };
}

/**
 * Groups sorted by count (largest first), then key by code point (not locale), so reports read the same on every run
 * and every machine.
 */
export function build(rule: CompiledRule, action: ReportAction, entries: ReportEntry[]): PlannedReport {
  const groups = new Map<string, number[]>();
  for (const e of entries) {
    for (const k of e.keys) {
      const ids = groups.get(k);
      if (ids) ids.push(e.instance_id);
      else groups.set(k, [e.instance_id]);
    }
  }
  const list: ReportGroup[] = [...groups.entries()]
    .map(([key, ids]) => ({ key, count: ids.length, instance_ids: ids.sort((a, b) => a - b) }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    rule: rule.name,
    title: action.title ?? rule.name,
    group_by: action.group_by,
    columns: action.columns,
    groups: list,
    rows: [...entries].sort((a, b) => a.instance_id - b.instance_id).map((e) => e.row),
  };
}
