/**
 * HTML of `plan --compare`: the plan page of the working tree's touched rules (render/plan/html.ts), led by the
 * impact: one line per touched rule with its counts, then per rule tables of the changes newly planned, no longer
 * planned and writing other values. It uses only the page's own styles (its Content-Security-Policy allows no
 * other), and no `data-change-id`, which the page's filter keeps for the plan's changes.
 */
import { forecastLine, impactLine, impactSize, type RuleImpact } from "../../engine/impact.js";
import type { PlannedChange } from "../../plan/types.js";
import { esc, html as planHtml } from "../plan/html.js";
import { planNames, type PlanNames } from "../plan/names.js";
import type { CompareFormatter } from "./types.js";
import { changedTitle, changeIndex, changeTitle, differences, impactSummary, writes } from "./words.js";

/** Rows per table of one rule; the JSON plan (`--out`) carries every one. */
const MAX_ROWS = 2000;

function changeRows(sign: string, changes: readonly PlannedChange[], tag: "ins" | "del", names: PlanNames): string {
  return changes
    .slice(0, MAX_ROWS)
    .map(
      (ch) =>
        `<tr><td>${sign}</td><td>${esc(changeTitle(ch, names))}</td><td>${writes(ch, names)
          .map((w) => `<${tag}>${esc(w)}</${tag}>`)
          .join("<br>")}</td></tr>`,
    )
    .join("");
}

function more(n: number): string {
  return n > MAX_ROWS ? `<p>… ${n - MAX_ROWS} more in the JSON plan (<code>--out</code>).</p>` : "";
}

function ruleSection(i: RuleImpact, index: number, working: ReturnType<typeof changeIndex>, names: PlanNames): string {
  const out: string[] = [
    `<section class="impact-rule" id="impact-${index}" data-impact-rule="${esc(i.rule)}"><h3><code>${esc(i.rule)}</code> (${esc(i.status)})</h3>`,
  ];
  const table = (title: string, rows: string, n: number): void => {
    if (n === 0) return;
    out.push(
      `<h4>${esc(title)} (${n})</h4><div class="scroll"><table><thead><tr><th scope="col"></th><th scope="col">instance and change</th><th scope="col">inputs</th></tr></thead><tbody>${rows}</tbody></table></div>${more(n)}`,
    );
  };
  table("Newly planned", changeRows("+", i.added, "ins", names), i.added.length);
  table("No longer planned", changeRows("−", i.removed, "del", names), i.removed.length);
  const deferred = i.deferred ?? [];
  const undeferred = i.no_longer_deferred ?? [];
  table("Deferred by the rollout limit, still planned later", changeRows("›", deferred, "ins", names), deferred.length);
  table("No longer deferred, planned this run", changeRows("‹", undeferred, "ins", names), undeferred.length);
  const changed = i.changed
    .slice(0, MAX_ROWS)
    .map(
      (w) =>
        `<tr><td>~</td><td>${esc(changedTitle(w, working(i.rule, w), i.rule, names))}</td><td>${differences(
          w,
          i.rule,
          names,
        )
          .map((d) => `${esc(d.key)} <del>${esc(d.before)}</del> → <ins>${esc(d.after)}</ins>`)
          .join("<br>")}</td></tr>`,
    )
    .join("");
  table("Writes other values", changed, i.changed.length);
  out.push(`</section>`);
  return out.join("");
}

function impactSection(plan: Parameters<CompareFormatter>[0]): string {
  const working = changeIndex(plan);
  const names = planNames(plan);
  const lines = plan.impact.map((i, n) => {
    const f = forecastLine(i);
    return `<li data-impact="${esc(i.rule)}"><a href="#impact-${n}">${esc(impactLine(i))}</a>${f ? `<br><span class="forecast">${esc(f)}</span>` : ""}</li>`;
  });
  const details = plan.impact.map((i, n) => (impactSize(i) > 0 ? ruleSection(i, n, working, names) : "")).join("");
  return (
    `<section id="impact" aria-labelledby="impact-h"><h1 id="impact-h">What this change does</h1>` +
    (lines.length > 0 ? `<ul class="impact-lines">${lines.join("")}</ul>` : "") +
    `<p class="summary">${esc(impactSummary(plan))}</p>` +
    details +
    `<h2>The plan of the added and edited rules</h2></section>`
  );
}

export const html: CompareFormatter = (plan, options) => {
  const page = planHtml(plan, options);
  const at = page.indexOf("<main>");
  if (at < 0) return page;
  const cut = at + "<main>".length;
  return page.slice(0, cut) + impactSection(plan) + page.slice(cut);
};
