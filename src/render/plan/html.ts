/**
 * One self-contained HTML page for reviewing a plan in the browser (README.md, "Plan review in the browser"): every
 * change rendered as HTML (readable with scripts off), reports as inline SVG bar charts, and a search box whose small
 * inline script is the only part that needs JavaScript. Nothing is fetched: no CDN, no web fonts, and a
 * Content-Security-Policy of `default-src 'none'` that allows only this page's own style and script (by hash), so
 * even a value that slipped through escaping could neither run nor load anything.
 */
import { shortInstant } from "../../text/instant.js";
import { revertLines } from "./revert.js";
import { serviceName } from "../../model/settings.js";
import { createHash } from "node:crypto";
import { MUTATING_KINDS } from "../../actions/index.js";
import type { Plan, PlannedChange, PlannedReport, RulePlanSummary } from "../../plan/types.js";
import { textSafe, textSafeLines } from "../escape.js";
import { changedSinceHeadline, changedSinceOf, REMOVED_HEADING, REMOVED_WHY } from "./changed-since.js";
import {
  deferredWords,
  workflowsWords,
  diffKeys,
  partialLine,
  presentation,
  showValue,
  skipLines,
  summaryLine,
} from "./summary.js";
import { keyLabel, planNames, stepName, workflowCell, type PlanNames } from "./names.js";
import { plural } from "../../text/plural.js";
import type { PlanFormatter } from "./types.js";
import { SCRIPT, STYLE } from "./html-assets.js";

/** Changes per lazily laid-out block: the browser skips layout and paint of blocks off screen (content-visibility). */
const CHUNK = 100;
/** Bars per chart; the report's table below the chart always lists every group. */
const MAX_BARS = 40;
/** Instance rows of a report shown on the page; the JSON plan and --report-dir files carry all of them. */
const MAX_REPORT_ROWS = 500;
/** A value longer than this is cut on the page (the full value is in the cell's tooltip and the JSON plan). */
const MAX_VALUE_CHARS = 300;

/** Text for HTML content and double-quoted attribute values; controls and bidi overrides shown, not obeyed. */
export function esc(v: unknown): string {
  const s = typeof v === "string" ? v : String(v);
  return textSafeLines(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Text for element content only (quotes need no escaping there; values are full of them and rows are many). */
function text(v: string): string {
  return textSafeLines(v).replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe inside a <script> element: no `</script>`, no `<!--`, no line separators that end a JS string. */
export function scriptJson(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** How a change's kind is named on the page: the one place to change wording (symbol and legend come from the action). */
function kindLabel(change: Pick<PlannedChange, "kind">): { symbol: string; label: string } {
  const p = presentation(change.kind);
  return { symbol: p.symbol, label: p.legend };
}

/** Keys another part of flowrules may add to the plan; shown only when present. */
interface OptionalKeys {
  audit?: unknown;
  excluded?: unknown;
}

const isAudit = (ch: PlannedChange): boolean => (ch as PlannedChange & OptionalKeys).audit === true;
const excludedOf = (r: RulePlanSummary): number | undefined => {
  const e = (r as RulePlanSummary & OptionalKeys).excluded;
  return typeof e === "number" ? e : undefined;
};

function cut(s: string): string {
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s;
}

function valueHtml(tag: "del" | "ins", v: unknown): string {
  const s = showValue(v);
  const title = s.length > MAX_VALUE_CHARS ? ` title="${esc(s)}"` : "";
  return `<${tag}${title}>${text(cut(s))}</${tag}>`;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(", ");
  return JSON.stringify(v);
}

function diffHtml(ch: PlannedChange, names: PlanNames): string {
  const lines: string[] = [];
  for (const key of diffKeys(ch.before, ch.after)) {
    const label = text(keyLabel(names, ch, key));
    // a value the plan did not need to read is shown as set, not as a guessed before → after
    lines.push(
      key in ch.before
        ? `${label} ${valueHtml("del", ch.before[key])} → ${valueHtml("ins", ch.after[key])}`
        : `${label} set to ${valueHtml("ins", ch.after[key])}`,
    );
  }
  return lines.join("<br>");
}

/** The step cell: `step 20111 "Manager approval"`, or the id alone. */
function stepCell(ch: PlannedChange, names: PlanNames): string {
  if (ch.step_id === undefined) return "";
  const name = stepName(names, ch);
  return `step ${ch.step_id}${name !== undefined ? ` ${JSON.stringify(name)}` : ""}`;
}

function changeRow(ch: PlannedChange, names: PlanNames): string {
  const { symbol, label } = kindLabel(ch);
  const audit = isAudit(ch) ? ` <span class="badge">audit</span>` : "";
  // as few elements and bytes as readable: at 10,000 changes the page's load time is mostly parsing these rows.
  // The four cells are kind, instance, step, before → after (styled by position).
  return (
    `<li data-change-id="${esc(ch.id)}"><span><b class="k-${ch.kind}">${text(symbol)}</b> ${text(label)}${audit}</span>` +
    `<span><i>#${ch.instance_id}</i> ${text(ch.instance_name)}</span>` +
    `<span>${text(stepCell(ch, names))}</span>` +
    `<span>${diffHtml(ch, names)}</span></li>`
  );
}

/** What the search box matches: instance id and name, rule, kind (its name and its label), step, "audit". */
function searchText(ch: PlannedChange, names: PlanNames): string {
  const { label } = kindLabel(ch);
  // as the page shows the name: the filter matches what a reviewer sees
  return textSafe(
    `#${ch.instance_id} ${ch.instance_name} ${ch.rule} ${ch.kind} ${label} ${stepCell(ch, names)}${isAudit(ch) ? " audit" : ""}`,
  ).toLowerCase();
}

function barChart(r: PlannedReport, index: number): string {
  const groups = r.groups.slice(0, MAX_BARS);
  const rest = r.groups.length - groups.length;
  const max = Math.max(1, ...groups.map((g) => g.count));
  const rowH = 24;
  const labelW = 190;
  const barW = 380;
  const width = labelW + barW + 70;
  const height = groups.length * rowH + (rest > 0 ? rowH : 0) + 8;
  const titleId = `chart-${index}-title`;
  const bars = groups.map((g, i) => {
    const y = 4 + i * rowH;
    const w = Math.max(g.count > 0 ? 2 : 0, Math.round((g.count / max) * barW));
    const shown = g.key.length > 28 ? `${g.key.slice(0, 27)}…` : g.key;
    return (
      `<g class="bar"><title>${esc(`${g.key}: ${g.count}`)}</title>` +
      `<text x="${labelW - 8}" y="${y + 16}" text-anchor="end">${esc(shown)}</text>` +
      `<rect x="${labelW}" y="${y + 3}" width="${w}" height="${rowH - 8}" rx="2"></rect>` +
      `<text class="n" x="${labelW + w + 6}" y="${y + 16}">${g.count}</text></g>`
    );
  });
  if (rest > 0) {
    bars.push(
      `<text class="more" x="${labelW}" y="${4 + groups.length * rowH + 16}">${esc(`… ${plural(rest, "more group", "more groups")} in the table`)}</text>`,
    );
  }
  return (
    `<svg class="chart" role="img" aria-labelledby="${titleId}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">` +
    `<title id="${titleId}">${esc(`${r.title} by ${r.group_by}`)}</title>${bars.join("")}</svg>`
  );
}

function reportSection(r: PlannedReport, index: number): string {
  const out: string[] = [];
  out.push(`<section class="report" data-report-rule="${esc(r.rule)}"><h3>${esc(r.title)}</h3>`);
  out.push(
    `<p>Rule <code>${esc(r.rule)}</code>: ${plural(r.rows.length, "instance", "instances")} grouped by <code>${esc(r.group_by)}</code>.</p>`,
  );
  out.push(`<div class="side">`);
  if (r.groups.length > 0) out.push(barChart(r, index));
  out.push(
    `<table class="groups"><thead><tr><th scope="col">${esc(r.group_by)}</th><th scope="col" class="num">count</th></tr></thead><tbody>`,
  );
  for (const g of r.groups) out.push(`<tr><td>${esc(g.key)}</td><td class="num">${g.count}</td></tr>`);
  out.push(`</tbody></table></div>`);
  if (r.rows.length > 0) {
    out.push(`<details><summary>Instances (${r.rows.length})</summary><div class="scroll"><table><thead><tr>`);
    for (const c of r.columns) out.push(`<th scope="col">${esc(c)}</th>`);
    out.push(`</tr></thead><tbody>`);
    for (const row of r.rows.slice(0, MAX_REPORT_ROWS)) {
      out.push(`<tr>${r.columns.map((c) => `<td>${esc(cut(cellText(row[c])))}</td>`).join("")}</tr>`);
    }
    out.push(`</tbody></table></div>`);
    if (r.rows.length > MAX_REPORT_ROWS)
      out.push(
        `<p>… ${r.rows.length - MAX_REPORT_ROWS} more rows in the JSON plan and in <code>--report-dir</code> files.</p>`,
      );
    out.push(`</details>`);
  }
  out.push(`</section>`);
  return out.join("");
}

function rulesTable(plan: Plan, names: PlanNames): string {
  const withExcluded = plan.rules.some((r) => excludedOf(r) !== undefined);
  const head = [
    "Rule",
    "Workflow",
    "Selected",
    "Matched",
    ...(withExcluded ? ["Excluded"] : []),
    "Changes",
    "Skipped",
    "Status",
  ];
  const num = new Set(["Selected", "Matched", "Excluded", "Changes", "Skipped"]);
  const out: string[] = [`<div class="scroll"><table class="rules"><thead><tr>`];
  for (const h of head) out.push(`<th scope="col"${num.has(h) ? ` class="num"` : ""}>${h}</th>`);
  out.push(`</tr></thead><tbody>`);
  plan.rules.forEach((r, i) => {
    const wf =
      r.workflow_id === null ? (workflowsWords(r) ?? "—") : workflowCell(names, r.workflow_id, r.workflow_name);
    const name = r.changes > 0 ? `<a href="#rule-${i}"><code>${esc(r.name)}</code></a>` : `<code>${esc(r.name)}</code>`;
    const cells = [
      `<th scope="row">${name}</th>`,
      `<td>${esc(wf)}</td>`,
      `<td class="num">${r.selected}</td>`,
      `<td class="num">${r.matched}</td>`,
      ...(withExcluded ? [`<td class="num">${excludedOf(r) ?? ""}</td>`] : []),
      `<td class="num">${r.changes}</td>`,
      `<td class="num">${r.skipped}</td>`,
      r.status === "ok"
        ? `<td class="ok">ok${deferredWords(r) ? `<br><span class="deferred">${esc(deferredWords(r) ?? "")}</span>` : ""}</td>`
        : r.status === "inactive"
          ? `<td title="${esc(r.reason ?? "")}">inactive</td>`
          : `<td class="failed"><strong>failed</strong></td>`,
    ];
    out.push(`<tr data-rule="${esc(r.name)}">${cells.join("")}</tr>`);
  });
  out.push(`</tbody></table></div>`);
  // why matched instances have no change, per rule and reason
  const skips = plan.rules.flatMap((r) => skipLines(r).map((l) => `<li><code>${esc(r.name)}</code>: ${esc(l)}</li>`));
  if (skips.length > 0)
    out.push(`<p>Skipped (matched, no change needed or possible):</p><ul class="skips">${skips.join("")}</ul>`);
  return out.join("");
}

function countsList(plan: Plan): string {
  const items: string[] = [];
  for (const k of MUTATING_KINDS) {
    const { symbol, label } = kindLabel({ kind: k });
    items.push(
      `<div class="count" data-count="${k}"><dt><b class="k-${k}" aria-hidden="true">${esc(symbol)}</b> ${esc(label)}</dt><dd>${plan.summary[k]}</dd></div>`,
    );
  }
  items.push(`<div class="count" data-count="reports"><dt>reports</dt><dd>${plan.summary.reports}</dd></div>`);
  items.push(
    `<div class="count${plan.errors.length > 0 ? " failed" : ""}" data-count="errors"><dt>errors</dt><dd>${plan.errors.length}</dd></div>`,
  );
  return `<dl class="counts">${items.join("")}</dl>`;
}

function errorsSection(plan: Plan): string {
  if (plan.errors.length === 0) return "";
  const items = plan.errors.map((e) => {
    const where = [e.rule ? `rule ${e.rule}` : "", e.instance_id !== undefined ? `instance #${e.instance_id}` : ""]
      .filter(Boolean)
      .join(", ");
    return `<li><span class="badge err">${esc(e.code)}</span> ${where ? `<span class="where">${esc(where)}</span>: ` : ""}${esc(e.message)}</li>`;
  });
  return `<section id="errors" aria-labelledby="errors-h"><h2 id="errors-h">Errors (${plan.errors.length})</h2><ul class="errors">${items.join("")}</ul></section>`;
}

function changesSection(plan: Plan, names: PlanNames): { html: string; search: string[] } {
  const search: string[] = [];
  if (plan.changes.length === 0)
    return { html: `<section id="changes"><h2>Changes</h2><p>No changes.</p></section>`, search };
  // the plan lists changes rule by rule; group them anyway so the page never depends on that order
  const byRule = new Map<string, PlannedChange[]>();
  for (const ch of plan.changes) {
    const list = byRule.get(ch.rule);
    if (list) list.push(ch);
    else byRule.set(ch.rule, [ch]);
  }
  const ruleIndex = new Map(plan.rules.map((r, i) => [r.name, i]));
  const out: string[] = [];
  out.push(
    `<section id="changes" aria-labelledby="changes-h"><h2 id="changes-h">Changes (${plan.changes.length})</h2>`,
  );
  out.push(
    `<div class="filter" role="search"><label for="q">Filter changes</label> ` +
      `<input type="search" id="q" placeholder="instance id or name, rule, kind — press / to focus" autocomplete="off" spellcheck="false" disabled> ` +
      `<output id="shown" for="q" aria-live="polite">${plural(plan.changes.length, "change", "changes")}</output>` +
      `<noscript> Filtering needs JavaScript; every change is listed below.</noscript></div>`,
  );
  let extra = plan.rules.length;
  for (const [rule, changes] of byRule) {
    const id = ruleIndex.get(rule) ?? extra++;
    out.push(`<section class="rule-changes" id="rule-${id}" data-rule="${esc(rule)}" aria-labelledby="rule-${id}-h">`);
    out.push(
      `<h3 id="rule-${id}-h"><code>${esc(rule)}</code> <span class="n" data-total="${changes.length}">${plural(changes.length, "change", "changes")}</span></h3>`,
    );
    out.push(
      `<div class="head" aria-hidden="true"><span>kind</span><span>instance</span><span>step</span><span>before → after</span></div>`,
    );
    for (let i = 0; i < changes.length; i += CHUNK) {
      // only full blocks are laid out lazily: their estimated height is right, a short last block's would not be
      out.push(changes.length - i >= CHUNK ? `<ul class="chunk full">` : `<ul class="chunk">`);
      for (const ch of changes.slice(i, i + CHUNK)) {
        out.push(changeRow(ch, names));
        search.push(searchText(ch, names));
      }
      out.push(`</ul>`);
    }
    out.push(`</section>`);
  }
  out.push(`</section>`);
  return { html: out.join(""), search };
}

const sha256 = (s: string): string => `'sha256-${createHash("sha256").update(s, "utf8").digest("base64")}'`;

export const html: PlanFormatter = (plan) => {
  const names = planNames(plan);
  const changes = changesSection(plan, names);
  const errorsHtml = errorsSection(plan);
  const nav = [
    `<a href="#rules">Rules</a>`,
    plan.reports.length > 0 ? `<a href="#reports">Reports (${plan.reports.length})</a>` : "",
    `<a href="#changes">Changes (${plan.changes.length})</a>`,
    plan.errors.length > 0 ? `<a href="#errors">Errors (${plan.errors.length})</a>` : "",
  ].filter(Boolean);
  const body: string[] = [];
  body.push(`<a class="skip" href="#changes">Skip to the changes</a><main>`);
  body.push(`<header><h1>flowrules plan</h1><p class="summary" id="summary">${esc(summaryLine(plan))}</p>`);
  if (plan.forecast_at !== undefined)
    body.push(
      `<p class="meta forecast" id="forecast">Forecast for ${esc(shortInstant(plan.forecast_at))}, from data read at ${esc(plan.created_at)}: what time alone would bring if nobody changed anything. It cannot be applied.</p>`,
    );
  const partial = partialLine(plan);
  if (partial !== undefined) body.push(`<p class="meta partial" id="partial">${esc(partial)}</p>`);
  body.push(
    `<p class="meta">Planned at ${esc(plan.created_at)} against ${esc(plan.base_url ? serviceName(plan.base_url, plan.profile) : "fixtures")} by flowrules ${esc(plan.flowrules_version)}.</p>`,
  );
  const changed = changedSinceOf(plan);
  if (changed) {
    body.push(
      `<p class="meta" id="changed-since">${changedSinceHeadline(changed.changed_since, (s) => `<code>${esc(s)}</code>`)}</p>`,
    );
    if (changed.removed_rules.length > 0) {
      const items = changed.removed_rules.map(
        (r) => `<li><code>${esc(r.name)}</code> (was in <code>${esc(r.file)}</code>)</li>`,
      );
      body.push(`<p class="meta">${REMOVED_HEADING} ${REMOVED_WHY}:</p><ul>${items.join("")}</ul>`);
    }
  }
  if (plan.revert)
    body.push(
      `<section id="revert">${revertLines(plan, (x) => x)
        .map((l) => `<p class="meta">${esc(l)}</p>`)
        .join("")}</section>`,
    );
  body.push(`<nav aria-label="Sections">${nav.join(" · ")}</nav>${countsList(plan)}</header>`);
  body.push(errorsHtml);
  body.push(
    `<section id="rules" aria-labelledby="rules-h"><h2 id="rules-h">Rules (${plan.rules.length})</h2>${rulesTable(plan, names)}</section>`,
  );
  if (plan.reports.length > 0) {
    body.push(
      `<section id="reports" aria-labelledby="reports-h"><h2 id="reports-h">Reports (${plan.reports.length})</h2>`,
    );
    plan.reports.forEach((r, i) => body.push(reportSection(r, i)));
    body.push(`</section>`);
  }
  body.push(changes.html);
  body.push(
    `<footer>Open this file from disk; it loads nothing from the network. The full plan is the JSON file written with <code>--out</code>.</footer></main>`,
  );
  const csp = `default-src 'none'; style-src ${sha256(STYLE)}; script-src ${sha256(SCRIPT)}; img-src 'none'; base-uri 'none'; form-action 'none'`;
  return [
    `<!doctype html>`,
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">`,
    `<meta name="viewport" content="width=device-width,initial-scale=1">`,
    `<meta name="color-scheme" content="light dark">`,
    `<title>${esc(`flowrules plan — ${summaryLine(plan)}`)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    body.join("\n"),
    `<script type="application/json" id="search-text">${scriptJson(changes.search)}</script>`,
    `<script>${SCRIPT}</script>`,
    `</body></html>`,
    "",
  ].join("\n");
};
