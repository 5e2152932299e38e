/** Terminal output: grouped by rule, one symbol per kind with a legend of the symbols used, then the summary line. */
import { shortInstant } from "../../text/instant.js";
import { revertLines } from "./revert.js";
import { serviceName } from "../../model/settings.js";
import pc from "picocolors";
import type { PlannedReport } from "../../plan/types.js";
import { textSafe as t } from "../escape.js";
import { changedSinceHeadline, changedSinceOf, REMOVED_HEADING, REMOVED_WHY } from "./changed-since.js";
import {
  deferredWords,
  workflowsWords,
  describeChange,
  diffKeys,
  kindsUsed,
  presentation,
  showValue,
  skipLines,
  summaryLine,
  partialLine,
} from "./summary.js";
import { keyLabel, planNames, workflowLabel } from "./names.js";
import { plural } from "../../text/plural.js";
import { changeCounts, ruleAuditCount } from "../../plan/change-counts.js";
import type { PlanFormatter } from "./types.js";
import { table } from "../table.js";

/** Rows of a report shown in the terminal; the JSON plan and --report-dir carry all of them. */
const MAX_REPORT_ROWS = 20;

function reportTable(header: string[], rows: string[][]): string[] {
  return table([header, ...rows], { rule: true });
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return t(v);
  if (Array.isArray(v)) return t(v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(", "));
  return t(JSON.stringify(v));
}

export function reportLines(r: PlannedReport, maxRows = MAX_REPORT_ROWS): string[] {
  const total = r.rows.length;
  const out = [`Report ${t(r.title)} (rule ${t(r.rule)}): ${plural(total, "instance")} by ${t(r.group_by)}`];
  out.push(
    ...reportTable(
      [t(r.group_by), "count"],
      r.groups.map((g) => [t(g.key), String(g.count)]),
    ).map((l) => `  ${l}`),
  );
  if (total > 0) {
    out.push("");
    const rows = r.rows.slice(0, maxRows).map((row) => r.columns.map((c) => cell(row[c])));
    out.push(...reportTable(r.columns.map(t), rows).map((l) => `  ${l}`));
    if (total > maxRows)
      out.push(`  … ${total - maxRows} more rows in the JSON plan (--out) and in --report-dir files`);
  }
  return out;
}

export const text: PlanFormatter = (plan, { color }) => {
  const c = pc.createColors(color);
  const paint = (kind: string, s: string): string => c[presentation(kind).colour](s);
  const out: string[] = [];
  out.push(
    c.bold(
      `flowrules plan against ${t(plan.base_url ? serviceName(plan.base_url, plan.profile) : "(fixtures)")} at ${t(plan.created_at)}`,
    ),
  );
  if (plan.forecast_at !== undefined)
    out.push(
      c.bold(
        `Forecast for ${t(shortInstant(plan.forecast_at))}: the plan as it would be then if nobody changed anything (data as read now; apply refuses it)`,
      ),
    );

  const partial = partialLine(plan);
  if (partial !== undefined) out.push(c.bold(t(partial)));

  const names = planNames(plan);
  const used = kindsUsed(plan);
  if (used.length > 0) {
    out.push(`Legend: ${used.map((k) => `${paint(k, presentation(k).symbol)} ${presentation(k).legend}`).join("   ")}`);
  }

  const counts = changeCounts(plan.changes);
  for (const rule of plan.rules) {
    const wf =
      rule.workflow_id === null
        ? t(workflowsWords(rule) ?? "unresolved workflow")
        : t(workflowLabel(names, rule.workflow_id, rule.workflow_name));
    const status = rule.status === "failed" ? c.red(" FAILED") : "";
    if (rule.status === "inactive") {
      out.push(
        "",
        c.bold(`Rule ${t(rule.name)}`) +
          ` (${wf}): ${c.yellow("INACTIVE")}, ${t(rule.reason ?? "outside its active window")}`,
      );
      continue;
    }
    const audit = ruleAuditCount(counts, rule.name) > 0 ? c.yellow(" [audit: not applied]") : "";
    out.push("");
    out.push(
      c.bold(`Rule ${t(rule.name)}`) +
        ` (${wf}): ${rule.selected} selected, ${rule.matched} matched, ${plural(rule.changes, "change")}` +
        (rule.skipped > 0 ? `, ${rule.skipped} skipped` : "") +
        (rule.excluded ? `, ${rule.excluded} excluded` : "") +
        status +
        audit,
    );
    for (const line of skipLines(rule)) out.push(`  ${c.dim(t(line))}`);
    const deferred = deferredWords(rule);
    if (deferred) out.push(`  ${c.yellow(deferred)}`);
    // one at a time: a plan's changes may be made only as they are read (src/plan/lazy-changes.ts)
    for (const ch of plan.changes) {
      if (ch.rule !== rule.name) continue;
      const p = presentation(ch.kind);
      const what = t(describeChange(ch, names).label);
      out.push(
        `  ${paint(ch.kind, p.symbol)} #${ch.instance_id} ${t(JSON.stringify(ch.instance_name))}: ${what}${ch.audit === true ? c.yellow(" (audit)") : ""}`,
      );
      for (const key of diffKeys(ch.before, ch.after)) {
        const label = t(keyLabel(names, ch, key));
        // a value the plan did not need to read is shown as set, not as a guessed before → after
        out.push(
          key in ch.before
            ? `      ${label}: ${c.dim(t(showValue(ch.before[key])))} → ${t(showValue(ch.after[key]))}`
            : `      ${label}: set to ${t(showValue(ch.after[key]))}`,
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
    for (const e of plan.errors) out.push(`  ${c.red("!")} ${t(e.message)}`);
  }
  if (plan.revert) out.push("", ...revertLines(plan, t));
  out.push("");
  const changed = changedSinceOf(plan);
  if (changed) {
    // just above the closing summary line
    out.push(changedSinceHeadline(changed.changed_since, t));
    if (changed.removed_rules.length > 0) {
      out.push(`${REMOVED_HEADING} ${REMOVED_WHY}:`);
      for (const r of changed.removed_rules) out.push(`  - ${t(r.name)} (was in ${t(r.file)})`);
    }
    out.push("");
  }
  out.push(c.bold(summaryLine(plan)));
  return `${out.map((l) => l.trimEnd()).join("\n")}\n`;
};
