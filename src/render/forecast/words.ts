/** The words every forecast view shares: a point's day, a step's line, a rule's total (docs/forecast.md). */
import { dayLabel } from "../../text/instant.js";
import type { ForecastDocument, ForecastRuleEntry, ForecastRulePointEntry } from "./types.js";

export { dayLabel };

/** Whether points fall within a day of each other, so their labels need the time. */
export function needsTime(doc: ForecastDocument): boolean {
  const labels = doc.points.map((p) => dayLabel(p));
  return new Set(labels).size < labels.length;
}

const counts = (byKind: Record<string, number>, sign: string): string[] =>
  Object.entries(byKind).map(([kind, n]) => `${sign}${n} ${kind}`);

/** What one step added and took away for one rule: `+12 abort`, `-1`; empty when nothing. */
export function stepParts(p: ForecastRulePointEntry): string[] {
  return [...counts(p.step_added_by_kind, "+"), ...(p.step_removed > 0 ? [`-${p.step_removed} no longer`] : [])];
}

/** The first point after the start where time alone changed the rule's plan, if any. */
export function firstChange(r: ForecastRuleEntry): ForecastRulePointEntry | undefined {
  return r.points.slice(1).find((p) => p.step_added > 0 || p.step_removed > 0);
}

/** `+412 abort, -3 no longer` since the start, at the last point. */
export function totalParts(r: ForecastRuleEntry): string[] {
  const last = r.points.at(-1);
  if (!last) return [];
  return [...counts(last.added_by_kind, "+"), ...(last.removed > 0 ? [`-${last.removed} no longer`] : [])];
}

export function headline(doc: ForecastDocument): string {
  return `Forecast from ${doc.from.replace(/:\d\d\.\d{3}Z$/, "Z")} until ${doc.until.replace(/:\d\d\.\d{3}Z$/, "Z")}, every ${doc.every}: what time alone brings if nobody changes anything (data as read at ${doc.created_at}, ${doc.requests} requests).`;
}
