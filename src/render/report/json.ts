/** A report as its own JSON document: the plan's report (groups with counts and ids, rows) plus when and where. */
import type { Plan, PlannedReport } from "../../plan/types.js";
import { jsonSafe } from "../escape.js";

export function reportJson(
  r: PlannedReport,
  plan: Pick<Plan, "created_at" | "base_url" | "flowrules_version">,
): string {
  const doc = {
    format_version: 1,
    created_at: plan.created_at,
    base_url: plan.base_url,
    flowrules_version: plan.flowrules_version,
    rule: r.rule,
    title: r.title,
    group_by: r.group_by,
    columns: r.columns,
    total: r.rows.length,
    groups: r.groups,
    rows: r.rows,
  };
  return jsonSafe(`${JSON.stringify(doc, null, 2)}\n`);
}
