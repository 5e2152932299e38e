/** `flowrules forecast --format markdown`: a table of each rule's changes at each point, then the step lines. */
import { markdownCodeSafe, markdownSafe } from "../escape.js";
import type { ForecastFormatter } from "./types.js";
import { dayLabel, firstChange, headline, needsTime, stepParts, totalParts } from "./words.js";

export const forecastMarkdown: ForecastFormatter = (doc) => {
  const withTime = needsTime(doc);
  const code = (s: string): string => `\`${markdownCodeSafe(s)}\``;
  const out: string[] = ["## flowrules forecast", "", markdownSafe(headline(doc)), ""];
  out.push(`| Rule | ${doc.points.map((p, i) => (i === 0 ? "Now" : dayLabel(p, withTime))).join(" | ")} |`);
  out.push(`|---|${doc.points.map(() => "---:").join("|")}|`);
  for (const r of doc.rules) out.push(`| ${code(r.rule)} | ${r.points.map((p) => String(p.changes)).join(" | ")} |`);
  out.push("", "Changes planned at each point (cumulative). What time alone brings, step by step:", "");
  let any = false;
  doc.points.slice(1).forEach((at, i) => {
    const parts = doc.rules.flatMap((r) => {
      const p = r.points[i + 1];
      return p ? stepParts(p).map((s) => `${markdownSafe(s)} (${code(r.rule)})`) : [];
    });
    if (parts.length === 0) return;
    any = true;
    out.push(`- **${dayLabel(at, withTime)}**: ${parts.join(", ")}`);
  });
  if (!any) out.push("- nothing: the plans stay as they are now");
  out.push("");
  for (const r of doc.rules) {
    const first = firstChange(r);
    if (first)
      out.push(
        `- ${code(r.rule)}: by ${dayLabel(doc.until, withTime)} time alone brings ${markdownSafe(totalParts(r).join(", "))} (first on ${dayLabel(first.at, withTime)})`,
      );
  }
  for (const e of doc.errors) out.push(`- error at ${dayLabel(e.at, withTime)}: ${markdownSafe(e.message)}`);
  return `${out.join("\n")}\n`;
};
