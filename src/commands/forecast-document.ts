/**
 * The forecast document (src/render/forecast/json-schema.ts) from the plans at each point: per rule, its changes at
 * each instant and what time alone added or took away since the first point (cumulative) and since the point before
 * (per step). A change is identified by instance, kind and step, as `plan --compare` identifies them.
 */
import type { Plan, PlannedChange } from "../plan/types.js";
import type { ForecastDocument, ForecastRuleEntry } from "../render/forecast/types.js";
import type { ForecastPoint } from "../engine/forecast.js";
import { durationText } from "../text/duration.js";

const keyOf = (c: PlannedChange): string => `${c.instance_id}:${c.kind}:${c.step_id ?? ""}`;

function byKind(changes: Iterable<PlannedChange>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of changes) out[c.kind] = (out[c.kind] ?? 0) + 1;
  return out;
}

function ruleChanges(plan: Plan, rule: string): Map<string, PlannedChange> {
  return new Map(plan.changes.filter((c) => c.rule === rule).map((c) => [keyOf(c), c]));
}

const ids = (changes: Iterable<PlannedChange>): number[] =>
  [...new Set([...changes].map((c) => c.instance_id))].sort((a, b) => a - b);

export function forecastDocument(
  points: readonly ForecastPoint[],
  meta: { createdAt: Date; baseUrl: string; everyMs: number; requests: number },
): ForecastDocument {
  const first = points[0];
  const names = first ? first.plan.rules.map((r) => ({ name: r.name, workflow_id: r.workflow_id })) : [];
  const rules: ForecastRuleEntry[] = names.map(({ name, workflow_id }) => {
    const base = first ? ruleChanges(first.plan, name) : new Map<string, PlannedChange>();
    let previous = base;
    return {
      rule: name,
      workflow_id:
        workflow_id ??
        points.map((p) => p.plan.rules.find((r) => r.name === name)?.workflow_id).find((w) => w != null) ??
        null,
      points: points.map((p) => {
        const now = ruleChanges(p.plan, name);
        const summary = p.plan.rules.find((r) => r.name === name);
        const added = [...now].filter(([k]) => !base.has(k)).map(([, c]) => c);
        const removed = [...base.keys()].filter((k) => !now.has(k)).length;
        const stepAdded = [...now].filter(([k]) => !previous.has(k)).map(([, c]) => c);
        const stepRemoved = [...previous].filter(([k]) => !now.has(k)).map(([, c]) => c);
        previous = now;
        return {
          at: p.at.toISOString(),
          changes: now.size,
          by_kind: byKind(now.values()),
          matched: summary?.matched ?? 0,
          added: added.length,
          removed,
          added_by_kind: byKind(added),
          step_added: stepAdded.length,
          step_removed: stepRemoved.length,
          step_added_by_kind: byKind(stepAdded),
          instance_ids_added: ids(stepAdded),
          instance_ids_removed: ids(stepRemoved),
          ...(summary && summary.status !== "ok" ? { status: summary.status } : {}),
        };
      }),
    };
  });
  const errors: ForecastDocument["errors"] = [];
  const seen = new Set<string>();
  for (const p of points) {
    for (const e of p.plan.errors) {
      const key = `${e.rule ?? ""}:${e.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      errors.push({ at: p.at.toISOString(), rule: e.rule ?? "", message: e.message });
    }
  }
  return {
    format_version: 1,
    command: "forecast",
    created_at: meta.createdAt.toISOString(),
    base_url: meta.baseUrl,
    from: (first?.at ?? meta.createdAt).toISOString(),
    until: (points.at(-1)?.at ?? meta.createdAt).toISOString(),
    every: durationText(meta.everyMs),
    points: points.map((p) => p.at.toISOString()),
    requests: meta.requests,
    rules,
    errors,
  };
}
