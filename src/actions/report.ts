/** report: no mutation; a table of the matched instances grouped by one key. */
import { closest } from "../text/suggest.js";
import type { SourcePos } from "../model/rule-types.js";
import type { PlannedReport, ReportGroup } from "../plan/types.js";
import type { ActionCompileContext, ActionPlanInput, ReportActionKind, ReportEntry, RuleInfo } from "./types.js";
import type { ReportEntries } from "./report-entries.js";
import { lazyRows } from "../plan/lazy-rows.js";

/** Instance-record keys a report may group by besides a field alias. */
export const GROUP_BY_KEYS = ["tags", "status", "priority", "stage"] as const;

/** Instance-record columns a report may show besides `fields.<alias>`. */
export const RECORD_COLUMNS = [
  "id",
  "name",
  "status",
  "priority",
  "stage",
  "tags",
  "deadline",
  "started_time",
  "last_updated_time",
  "completed_time",
  "aborted_time",
  "active_step_ids",
  "visibility_mode",
  "public_url",
  "url",
] as const;

export const NO_TAG = "(no tag)";
export const NO_VALUE = "(no value)";
export const REGULAR_PRIORITY = "Regular";

export const DEFAULT_REPORT_COLUMNS = ["id", "name", "status"] as const;

const description = "Report the matched instances grouped by a key. Makes no change.";

const schema = {
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

export interface ReportAction {
  kind: "report";
  group_by: string;
  columns: string[];
  title?: string;
  pos: SourcePos;
}

/**
 * A report key as written (`amount`, `fields.amount`, `deadline`) to its normal form (`fields.amount`, `deadline`);
 * undefined, after reporting, when it names nothing. Record keys win over an alias of the same name.
 */
function reportKey(
  key: string,
  recordKeys: readonly string[],
  ctx: ActionCompileContext,
  rel: Array<string | number>,
  what: string,
): string | undefined {
  const aliases = ctx.aliases;
  if (key.startsWith("fields.")) {
    const alias = key.slice("fields.".length);
    if (aliases === undefined || aliases.includes(alias)) return key;
    const hint = closest(alias, aliases);
    ctx.error(
      "unknown-field",
      rel,
      `unknown field alias "${alias}" in ${what} of ${ctx.label}` +
        (hint !== undefined ? `; did you mean "fields.${hint}"?` : "") +
        (aliases.length > 0 ? ` (declared: ${aliases.join(", ")})` : ' (the rule declares no aliases under "fields:")'),
    );
    return undefined;
  }
  if (recordKeys.includes(key)) return key;
  if (aliases?.includes(key)) return `fields.${key}`;
  if (aliases === undefined) return undefined;
  const candidates = [...recordKeys, ...aliases.map((a) => `fields.${a}`)];
  const hint = closest(key, [...candidates, ...aliases]);
  const suggestion = hint === undefined ? "" : `; did you mean "${aliases.includes(hint) ? `fields.${hint}` : hint}"?`;
  ctx.error(
    "report-key",
    rel,
    `unknown ${what} "${key}" in ${ctx.label}${suggestion} (valid: ${recordKeys.join(", ")}` +
      (aliases.length > 0 ? `, or a field alias: ${aliases.map((a) => `fields.${a}`).join(", ")})` : ")"),
  );
  return undefined;
}

function compile(body: Record<string, unknown>, ctx: ActionCompileContext): ReportAction | undefined {
  const groupBy =
    typeof body.group_by === "string"
      ? reportKey(body.group_by, GROUP_BY_KEYS, ctx, ["group_by"], "group_by")
      : undefined;
  const written = Array.isArray(body.columns) ? body.columns : [...DEFAULT_REPORT_COLUMNS];
  const columns: string[] = [];
  written.forEach((c: unknown, k) => {
    if (typeof c !== "string") return;
    const n = reportKey(c, RECORD_COLUMNS, ctx, ["columns", k], "report column");
    if (n !== undefined) columns.push(n);
  });
  if (groupBy === undefined || columns.length !== written.length) return undefined;
  return {
    kind: "report",
    group_by: groupBy,
    columns,
    ...(typeof body.title === "string" ? { title: body.title } : {}),
    pos: ctx.pos,
  };
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

function entry(input: ActionPlanInput<ReportAction>): ReportEntry {
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
      keys = groupKeys((data.record ?? data.known)?.priority, REGULAR_PRIORITY);
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
function build(rule: RuleInfo, action: ReportAction, entries: ReportEntries): PlannedReport {
  const groups = new Map<string, number[]>();
  for (let i = 0; i < entries.size; i++) {
    for (const k of entries.keysAt(i)) {
      const ids = groups.get(k);
      if (ids) ids.push(entries.idAt(i));
      else groups.set(k, [entries.idAt(i)]);
    }
  }
  const list: ReportGroup[] = [...groups.entries()]
    .map(([key, ids]) => ({ key, count: ids.length, instance_ids: ids.sort((a, b) => a - b) }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  // rows by instance id (entries of one id in the order met), made from the entries only as they are read
  const order = Uint32Array.from({ length: entries.size }, (_, i) => i).sort(
    (a, b) => entries.idAt(a) - entries.idAt(b) || a - b,
  );
  return {
    rule: rule.name,
    title: action.title ?? rule.name,
    group_by: action.group_by,
    columns: action.columns,
    groups: list,
    rows: lazyRows(
      order.length,
      (i) => entries.rowAt(order[i] ?? 0),
      (search) => entries.mayHold(search),
    ),
  };
}

export const report: ReportActionKind<"report", ReportAction> = {
  kind: "report",
  mutating: false,
  description,
  schema,
  bare: false,
  compile,
  reads: () => [],
  recordKeys: (a) => [a.group_by, ...a.columns],
  entry,
  build,
};
