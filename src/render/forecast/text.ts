/** `flowrules forecast` as text: the changes of today's plan, then one line per point that brings any, then totals. */
import { textSafe } from "../escape.js";
import type { ForecastFormatter } from "./types.js";
import { dayLabel, firstChange, headline, needsTime, stepParts, totalParts } from "./words.js";

export const forecastText: ForecastFormatter = (doc) => {
  const out: string[] = [headline(doc), ""];
  const withTime = needsTime(doc);
  const today = doc.rules.flatMap((r) =>
    Object.entries(r.points[0]?.by_kind ?? {}).map(([kind, n]) => `${n} ${kind} (${textSafe(r.rule)})`),
  );
  out.push(`Now: ${today.length > 0 ? today.join(", ") : "no changes"}`);
  doc.points.slice(1).forEach((at, i) => {
    const parts = doc.rules.flatMap((r) => {
      const p = r.points[i + 1];
      return p ? stepParts(p).map((s) => `${s} (${textSafe(r.rule)})`) : [];
    });
    if (parts.length > 0) out.push(`${dayLabel(at, withTime)}: ${parts.join(", ")}`);
  });
  out.push("");
  const moving = doc.rules.filter((r) => firstChange(r) !== undefined);
  for (const r of moving) {
    const first = firstChange(r);
    out.push(
      `${textSafe(r.rule)}: by ${dayLabel(doc.until, withTime)} time alone brings ${totalParts(r).join(", ")}${first ? ` (first on ${dayLabel(first.at, withTime)})` : ""}`,
    );
  }
  const still = doc.rules.filter((r) => firstChange(r) === undefined).map((r) => textSafe(r.rule));
  if (still.length > 0) out.push(`No change from time alone: ${still.join(", ")}`);
  for (const e of doc.errors) out.push(`error at ${dayLabel(e.at, withTime)}: ${textSafe(e.message)}`);
  return `${out.join("\n")}\n`;
};
