/**
 * Markdown for pull-request comments (after Atlantis): summary and rule table outside a collapsible block, the diff
 * inside, and the whole comment under the 65,536-character limit however big the plan, saying what was left out.
 */
import { serviceName } from "../../model/settings.js";
import type { Plan, PlannedChange, PlannedReport, RulePlanSummary } from "../../plan/types.js";
import { markdownCodeSafe, markdownSafe } from "../escape.js";
import { revertLines } from "./revert.js";
import { changedSinceHeadline, changedSinceOf, REMOVED_HEADING, REMOVED_WHY } from "./changed-since.js";
import {
  deferredWords,
  workflowsWords,
  describeChange,
  diffKeys,
  presentation,
  showValue,
  skipLines,
  summaryLine,
  partialLine,
} from "./summary.js";
import { keyLabel, planNames, workflowCell, type PlanNames } from "./names.js";
import { plural } from "../../text/plural.js";
import { changeCounts, ruleAuditCount, type ChangeCounts } from "../../plan/change-counts.js";
import type { PlanFormatter } from "./types.js";

/** GitHub's comment limit is 65,536 characters; keep a margin for the footer. */
export const MARKDOWN_LIMIT = 65_536;
const MAX_ERRORS = 50;
const MAX_REPORT_ROWS = 50;

/** Data as Markdown text: one line, no markup of its own (it cannot break a table, close a block or add HTML). */
function md(v: unknown): string {
  let s: string;
  if (v === null || v === undefined) s = "";
  else if (typeof v === "string") s = v;
  else if (Array.isArray(v)) s = v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(", ");
  else s = JSON.stringify(v);
  return markdownSafe(s);
}

/** A name in a code span: a backtick would end the span, so it becomes a quote. */
function code(s: string): string {
  return `\`${markdownCodeSafe(s).replace(/`/g, "'")}\``;
}

/** A Mermaid label in quotes: Mermaid's own entity codes for what would end the label or make markup. */
function mermaidLabel(s: string): string {
  return markdownCodeSafe(s)
    .replace(/"/g, "'")
    .replace(/[<>&#]/g, (c) => `#${c.charCodeAt(0)};`);
}

export function reportMarkdown(r: PlannedReport): string {
  const lines: string[] = [];
  lines.push(`#### ${md(r.title)}`, "");
  lines.push(`Rule ${code(r.rule)}: ${plural(r.rows.length, "instance")} grouped by ${code(r.group_by)}.`, "");
  if (r.groups.length > 0) {
    lines.push("```mermaid", `pie showData title ${mermaidLabel(r.title)} by ${mermaidLabel(r.group_by)}`);
    for (const g of r.groups) lines.push(`    "${mermaidLabel(g.key)}" : ${g.count}`);
    lines.push("```", "");
  }
  lines.push(`| ${md(r.group_by)} | count |`, "|---|---:|");
  for (const g of r.groups) lines.push(`| ${md(g.key)} | ${g.count} |`);
  if (r.rows.length > 0) {
    lines.push("", `<details><summary>Instances (${r.rows.length})</summary>`, "");
    lines.push(`| ${r.columns.map(md).join(" | ")} |`, `|${r.columns.map(() => "---").join("|")}|`);
    for (const row of r.rows.slice(0, MAX_REPORT_ROWS))
      lines.push(`| ${r.columns.map((c) => md(row[c])).join(" | ")} |`);
    if (r.rows.length > MAX_REPORT_ROWS)
      lines.push("", `… ${r.rows.length - MAX_REPORT_ROWS} more rows in the JSON plan.`);
    lines.push("", "</details>");
  }
  lines.push("");
  return lines.join("\n");
}

/** The Status cell: ok, failed, inactive (with why), with the rule's rollout state (audit, excluded). */
function ruleState(counts: ChangeCounts, r: RulePlanSummary): string {
  if (r.status === "inactive") return `inactive: ${md(r.reason ?? "outside its active window")}`;
  const notes = [
    ruleAuditCount(counts, r.name) > 0 ? "audit" : "",
    r.excluded ? `${r.excluded} excluded` : "",
    deferredWords(r) ?? "",
  ].filter(Boolean);
  return `${r.status === "ok" ? "ok" : "**failed**"}${notes.length ? ` (${notes.join(", ")})` : ""}`;
}

function changeBlock(ch: PlannedChange, names: PlanNames): string {
  const p = presentation(ch.kind);
  const what = describeChange(ch, names).label;
  // inside a diff fence, shown literally: only controls and line breaks need care
  const f = markdownCodeSafe;
  const lines = [
    `@@ ${p.symbol} #${ch.instance_id} ${f(ch.instance_name)}: ${f(what)}${ch.audit === true ? " (audit: not applied)" : ""} @@`,
  ];
  for (const key of diffKeys(ch.before, ch.after)) {
    const label = f(keyLabel(names, ch, key));
    if (key in ch.before) lines.push(`- ${label}: ${f(showValue(ch.before[key]))}`);
    lines.push(`+ ${label}: ${f(showValue(ch.after[key]))}`);
  }
  return lines.join("\n");
}

/** The changed-since note, as a quote under the heading, outside any collapsed block, where reviewers look first. */
function changedSinceNote(plan: Plan): string {
  const changed = changedSinceOf(plan);
  if (!changed) return "";
  const note = [`> ${changedSinceHeadline(changed.changed_since, code)}`];
  if (changed.removed_rules.length > 0) {
    note.push("", `**${REMOVED_HEADING}** ${REMOVED_WHY}:`, "");
    for (const r of changed.removed_rules) note.push(`- ${code(r.name)} (was in ${code(r.file)})`);
  }
  return `${note.join("\n")}\n\n`;
}

export const markdown: PlanFormatter = (plan, options) => {
  const limit = options.maxChars ?? MARKDOWN_LIMIT;
  const names = planNames(plan);
  // counted once for the whole view (a plan read from a file is counted by a pass over its changes)
  const counts = changeCounts(plan.changes);
  // in the head, so the body's budget leaves it room
  const changed = changedSinceNote(plan);
  const where = options.planFile ? code(options.planFile) : "the JSON plan (`flowrules plan --out plan.json`)";
  const head: string[] = [];
  head.push("## flowrules plan", "", `${changed}**${summaryLine(plan)}**`, "");
  const partial = partialLine(plan);
  if (partial !== undefined) head.push(`> **${partial}**`, "");
  if (plan.revert) head.push(...revertLines(plan, md).map((l) => (l.startsWith("  ") ? `- ${l.trim()}` : l)), "");
  head.push("| Rule | Workflow | Selected | Matched | Changes | Status |", "|---|---|---:|---:|---:|---|");
  for (const r of plan.rules) {
    const wf =
      r.workflow_id === null ? md(workflowsWords(r) ?? "—") : md(workflowCell(names, r.workflow_id, r.workflow_name));
    head.push(`| ${code(r.name)} | ${wf} | ${r.selected} | ${r.matched} | ${r.changes} | ${ruleState(counts, r)} |`);
  }
  head.push("");
  // why matched instances have no change, per rule and reason, where reviewers look first
  const skips = plan.rules.flatMap((r) => skipLines(r).map((l) => `- ${code(r.name)}: ${md(l)}`));
  if (skips.length > 0) head.push("Skipped (matched, no change needed or possible):", "", ...skips, "");
  const audit = counts.audit;
  const excluded = plan.rules.reduce((n, r) => n + (r.excluded ?? 0), 0);
  if (audit > 0 || excluded > 0) {
    const parts = [
      audit > 0 ? `${plural(audit, "change")} in **audit** (shown, never applied)` : "",
      excluded > 0 ? `${plural(excluded, "instance")} **excluded** (rule \`exclude\` or the opt-out tag)` : "",
    ].filter(Boolean);
    head.push(`Rollout: ${parts.join("; ")}.`, "");
  }
  if (plan.errors.length > 0) {
    head.push(`**Errors (${plan.errors.length})**`, "");
    for (const e of plan.errors.slice(0, MAX_ERRORS)) head.push(`- ${md(e.message)}`);
    if (plan.errors.length > MAX_ERRORS) head.push(`- … ${plan.errors.length - MAX_ERRORS} more in ${where}`);
    head.push("");
  }
  const footer = `\n_Planned at ${md(plan.created_at)} against ${md(plan.base_url ? serviceName(plan.base_url, plan.profile) : "fixtures")} by flowrules ${md(plan.flowrules_version)}._\n`;

  let out = `${head.join("\n")}\n`;
  const budget = (): number => limit - out.length - footer.length - 400;

  if (plan.reports.length > 0) {
    let shown = 0;
    let section = "### Reports\n\n";
    for (const r of plan.reports) {
      const block = reportMarkdown(r);
      if (section.length + block.length > budget()) break;
      section += block;
      shown++;
    }
    if (shown < plan.reports.length)
      section += `\n… ${plural(plan.reports.length - shown, "report")} left out to fit the comment; see ${where}.\n`;
    out += `${section}\n`;
  }

  if (plan.changes.length > 0) {
    let body = "";
    let shown = 0;
    let currentRule = "";
    for (const ch of plan.changes) {
      let piece = "";
      if (ch.rule !== currentRule) {
        piece += `${currentRule ? "```\n\n" : ""}#### ${code(ch.rule)}\n\n\`\`\`diff\n`;
      }
      piece += `${changeBlock(ch, names)}\n`;
      if (body.length + piece.length > budget() - 200) break;
      body += piece;
      currentRule = ch.rule;
      shown++;
    }
    if (currentRule) body += "```\n";
    const left = plan.changes.length - shown;
    const note =
      left > 0
        ? `\n${left} of ${plural(plan.changes.length, "change")} left out to stay under the ${limit.toLocaleString("en-US")}-character comment limit; the full plan is in ${where}.\n`
        : "";
    // in the order the changes first show them
    const legendKinds = [...counts.byKind.keys()];
    const legend = legendKinds.map((k) => `${presentation(k).symbol} ${presentation(k).legend}`).join(" · ");
    out += `<details><summary>Changes (${plan.changes.length}) — ${legend}</summary>\n\n${body}${note}\n</details>\n`;
  }
  return out + footer;
};
