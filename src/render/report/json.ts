/** A report as its own JSON document: the plan's report (groups with counts and ids, rows) plus when and where. */
import type { Plan, PlannedReport } from "../../plan/types.js";
import { jsonSafe } from "../escape.js";
import { arrayStreamer, gathered, objectStreamer } from "../../text/json-pieces.js";

type PlanInfo = Pick<Plan, "created_at" | "base_url" | "flowrules_version">;

export function reportJson(r: PlannedReport, plan: PlanInfo): string {
  return jsonSafe(`${JSON.stringify(reportDoc(r, plan), null, 2)}\n`);
}

// the groups and the rows written a batch at a time: each holds an entry per matched instance
const docStreamer = objectStreamer({
  groups: arrayStreamer(1, objectStreamer({ instance_ids: arrayStreamer(2000) })),
  rows: arrayStreamer(500),
});

/** The same text in pieces, as `--report-dir` writes it (never the report as one string). */
export function reportJsonPieces(r: PlannedReport, plan: PlanInfo): Generator<string> {
  return gathered(
    (function* () {
      yield* docStreamer(reportDoc(r, plan), 0);
      yield "\n";
    })(),
  );
}

function reportDoc(r: PlannedReport, plan: PlanInfo): Record<string, unknown> {
  return {
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
}
