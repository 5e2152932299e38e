/**
 * `flowrules forecast --format html`: one self-contained page (no request to any network, as the HTML plan), with an
 * inline SVG chart per rule of its planned changes at each point, and the step lines.
 */
import { esc } from "../plan/html.js";
import type { ForecastFormatter, ForecastRuleEntry } from "./types.js";
import { dayLabel, firstChange, headline, needsTime, stepParts, totalParts } from "./words.js";

const W = 560;
const H = 160;
const PAD = 32;

function chart(r: ForecastRuleEntry, labels: string[]): string {
  const values = r.points.map((p) => p.changes);
  const max = Math.max(1, ...values);
  const x = (i: number): number => PAD + (values.length <= 1 ? 0 : (i * (W - 2 * PAD)) / (values.length - 1));
  const y = (v: number): number => H - PAD - (v * (H - 2 * PAD)) / max;
  const line = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const dots = values
    .map(
      (v, i) =>
        `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3"><title>${esc(labels[i] ?? "")}: ${v}</title></circle>`,
    )
    .join("");
  const ticks = labels
    .map((l, i) => `<text x="${x(i).toFixed(1)}" y="${H - 10}" text-anchor="middle">${esc(l)}</text>`)
    .join("");
  return (
    `<svg role="img" aria-label="${esc(`${r.rule}: changes planned at each point`)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}">` +
    `<line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}" class="axis"/>` +
    `<text x="4" y="${(y(max) + 4).toFixed(1)}">${max}</text><text x="4" y="${H - PAD + 4}">0</text>` +
    `<polyline points="${line}" fill="none"/>${dots}${ticks}</svg>`
  );
}

const STYLE =
  "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24}main{max-width:960px;margin:auto;padding:1rem}" +
  "svg text{font-size:10px;fill:#57606a}svg polyline{stroke:#0969da;stroke-width:2}svg circle{fill:#0969da}.axis{stroke:#d0d7de}" +
  "table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}";

export const forecastHtml: ForecastFormatter = (doc) => {
  const withTime = needsTime(doc);
  const labels = doc.points.map((p, i) => (i === 0 ? "now" : dayLabel(p, withTime)));
  const body: string[] = [`<main><h1>flowrules forecast</h1><p id="summary">${esc(headline(doc))}</p>`];
  body.push(
    `<table id="points"><thead><tr><th>Rule</th>${labels.map((l) => `<th>${esc(l)}</th>`).join("")}</tr></thead><tbody>`,
  );
  for (const r of doc.rules)
    body.push(
      `<tr data-rule="${esc(r.rule)}"><td><code>${esc(r.rule)}</code></td>${r.points.map((p) => `<td>${p.changes}</td>`).join("")}</tr>`,
    );
  body.push("</tbody></table>");
  const steps = doc.points.slice(1).flatMap((at, i) => {
    const parts = doc.rules.flatMap((r) => {
      const p = r.points[i + 1];
      return p ? stepParts(p).map((s) => `${esc(s)} (<code>${esc(r.rule)}</code>)`) : [];
    });
    return parts.length > 0 ? [`<li><strong>${esc(dayLabel(at, withTime))}</strong>: ${parts.join(", ")}</li>`] : [];
  });
  body.push(
    `<h2>Step by step</h2><ul id="steps">${steps.length > 0 ? steps.join("") : "<li>nothing: the plans stay as they are now</li>"}</ul>`,
  );
  for (const r of doc.rules) {
    const first = firstChange(r);
    const words = first
      ? `by ${dayLabel(doc.until, withTime)} time alone brings ${totalParts(r).join(", ")} (first on ${dayLabel(first.at, withTime)})`
      : "no change from time alone";
    body.push(
      `<section class="rule" data-rule="${esc(r.rule)}"><h2><code>${esc(r.rule)}</code></h2><p>${esc(words)}</p>${chart(r, labels)}</section>`,
    );
  }
  if (doc.errors.length > 0)
    body.push(
      `<h2>Errors</h2><ul id="errors">${doc.errors.map((e) => `<li>${esc(dayLabel(e.at, withTime))}: ${esc(e.message)}</li>`).join("")}</ul>`,
    );
  body.push("</main>");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>flowrules forecast</title><style>${STYLE}</style></head><body>${body.join("\n")}</body></html>\n`;
};
