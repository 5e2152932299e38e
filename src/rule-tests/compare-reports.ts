/** `reports`: the groups (key → count or exactly these ids) and row counts of each report the case plans. */
import type { PlannedReport } from "../plan/types.js";
import type { Locate, Observed } from "./observed.js";
import type { ReportExpect } from "./schema.js";
import type { Failure, Said } from "./types.js";

function groupSaid(g: { count: number; instance_ids: readonly number[] }): Said {
  return [`count ${g.count} (instances `, { ids: g.instance_ids }, ")"];
}

function pick(e: ReportExpect, index: number, reports: readonly PlannedReport[]): PlannedReport | undefined {
  if (e.title !== undefined)
    return reports.find((r) => r.title === e.title && (e.rule === undefined || r.rule === e.rule));
  if (e.rule !== undefined) return reports.find((r) => r.rule === e.rule);
  return reports[index];
}

/** The same ids, in any order (a set compared by its members). */
function sameIds(a: readonly number[], b: readonly number[]): boolean {
  const bs = new Set(b);
  return a.length === b.length && new Set(a).size === bs.size && a.every((x) => bs.has(x));
}

export function compareReports(expected: ReportExpect[], obs: Observed, locate: Locate): Failure[] {
  const out: Failure[] = [];
  const reports = obs.plan.reports;
  expected.forEach((e, i) => {
    const r = pick(e, i, reports);
    const label = e.title ?? e.rule ?? `#${i + 1}`;
    if (!r) {
      out.push({
        subject: `report ${JSON.stringify(label)}`,
        at: locate(["reports", i]),
        expected: "a report",
        actual:
          reports.length === 0
            ? "the plan has no report"
            : `reports: ${reports.map((x) => JSON.stringify(x.title)).join(", ")}`,
      });
      return;
    }
    const name = `report ${JSON.stringify(r.title)}`;
    if (e.rows !== undefined && e.rows !== r.rows.length) {
      out.push({ subject: `${name} rows`, expected: String(e.rows), actual: String(r.rows.length) });
    }
    if (!e.groups) return;
    const actual = new Map(r.groups.map((g) => [g.key, g]));
    for (const [key, want] of Object.entries(e.groups)) {
      const g = actual.get(key);
      const subject = `${name} group ${JSON.stringify(key)}`;
      const shown: Said = typeof want === "number" ? `count ${want}` : ["instances ", { ids: want }];
      if (!g) out.push({ subject, expected: shown, actual: "(no such group)" });
      else if (typeof want === "number" && g.count !== want)
        out.push({ subject, expected: shown, actual: groupSaid(g) });
      else if (Array.isArray(want) && !sameIds(want, g.instance_ids))
        out.push({ subject, expected: shown, actual: ["instances ", { ids: g.instance_ids }] });
    }
    for (const g of r.groups) {
      if (g.key in e.groups) continue;
      out.push({
        subject: `${name} group ${JSON.stringify(g.key)}`,
        expected: "(no such group)",
        actual: groupSaid(g),
      });
    }
  });
  return out;
}
