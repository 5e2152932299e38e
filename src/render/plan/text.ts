/** Terminal output: grouped by rule, one symbol per kind with a legend of the symbols used, then the summary line. */
import { serviceName } from "../../model/settings.js";
import pc from "picocolors";
import type { Plan, PlannedReport } from "../../plan/types.js";
import { describeChange, diffKeys, kindsUsed, presentation, showValue, summaryLine } from "./summary.js";
import type { PlanFormatter } from "./types.js";
import { table } from "../table.js";

/** Rows of a report shown in the terminal; the JSON plan and --report-dir carry all of them. */
const MAX_REPORT_ROWS = 20;

function reportTable(header: string[], rows: string[][]): string[] {
  return table([header, ...rows], { rule: true });
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(", ");
  return JSON.stringify(v);
}

export function reportLines(r: PlannedReport, maxRows = MAX_REPORT_ROWS): string[] {
  const total = r.rows.length;
  const out = [`Report ${r.title} (rule ${r.rule}): ${total} ${total === 1 ? "instance" : "instances"} by ${r.group_by}`];
  out.push(...reportTable([r.group_by, "count"], r.groups.map((g) => [g.key, String(g.count)])).map((l) => `  ${l}`));
  if (total > 0) {
    out.push("");
    const rows = r.rows.slice(0, maxRows).map((row) => r.columns.map((c) => cell(row[c])));
    out.push(...reportTable(r.columns, rows).map((l) => `  ${l}`));
    if (total > maxRows) out.push(`  … ${total - maxRows} more rows in the JSON plan (--out) and in --report-dir files`);
  }
  return out;
}

export const text: PlanFormatter = (plan, { color }) => {
  const c = pc.createColors(color);
  const paint = (kind: string, s: string): string => c[presentation(kind).colour](s);
  const out: string[] = [];
  out.push(c.bold(`flowrules plan against ${plan.base_url ? serviceName(plan.base_url, plan.profile) : "(fixtures)"} at ${plan.created_at}`));

  const used = kindsUsed(plan);
  if (used.length > 0) {
    out.push(`Legend: ${used.map((k) => `${paint(k, presentation(k).symbol)} ${presentation(k).legend}`).join("   ")}`);
  }

  for (const rule of plan.rules) {
    const wf = rule.workflow_id === null ? "unresolved workflow" : `workflow ${rule.workflow_id}${rule.workflow_name ? ` ${rule.workflow_name}` : ""}`;
    const status = rule.status === "failed" ? c.red(" FAILED") : "";
    if (rule.status === "inactive") {
      out.push("", c.bold(`Rule ${rule.name}`) + ` (${wf}): ${c.yellow("INACTIVE")}, ${rule.reason ?? "outside its active window"}`);
      continue;
    }
    const audit = plan.changes.some((x) => x.rule === rule.name && x.audit === true) ? c.yellow(" [audit: not applied]") : "";
    out.push("");
    out.push(
      c.bold(`Rule ${rule.name}`) +
        ` (${wf}): ${rule.selected} selected, ${rule.matched} matched, ${rule.changes} ${rule.changes === 1 ? "change" : "changes"}` +
        (rule.skipped > 0 ? `, ${rule.skipped} skipped` : "") +
        (rule.excluded ? `, ${rule.excluded} excluded` : "") +
        status +
        audit,
    );
    for (const ch of plan.changes.filter((x) => x.rule === rule.name)) {
      const p = presentation(ch.kind);
      const what = describeChange(ch).label;
      out.push(`  ${paint(ch.kind, p.symbol)} #${ch.instance_id} ${JSON.stringify(ch.instance_name)}: ${what}${ch.audit === true ? c.yellow(" (audit)") : ""}`);
      for (const key of diffKeys(ch.before, ch.after)) {
        // a value the plan did not need to read is shown as set, not as a guessed before → after
        out.push(
          key in ch.before
            ? `      ${key}: ${c.dim(showValue(ch.before[key]))} → ${showValue(ch.after[key])}`
            : `      ${key}: set to ${showValue(ch.after[key])}`,
        );
      }
    }
    for (const r of plan.reports.filter((x) => x.rule === rule.name)) {
      out.push(...reportLines(r).map((l) => `  ${l}`));
    }
  }

  if (plan.errors.length > 0) {
    out.push("");
    out.push(c.red(c.bold(`Errors (${plan.errors.length}):`)));
    for (const e of plan.errors) out.push(`  ${c.red("!")} ${e.message}`);
  }
  out.push("");
  out.push(c.bold(summaryLine(plan)));
  return `${out.map((l) => l.trimEnd()).join("\n")}\n`;
};
