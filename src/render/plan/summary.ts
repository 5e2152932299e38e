/** The one summary line every format shares, e.g. `Plan: 12 steps to complete, 3 to save, 1 report.` */
import { shortInstant } from "../../text/instant.js";
import { MUTATING_KINDS, mutatingKind, type ChangeDescription, type KindPresentation } from "../../actions/index.js";
import type { Plan, PlannedChange, RulePlanSummary } from "../../plan/types.js";
import { plural } from "../../text/plural.js";
import { changeCounts, kindCount } from "../../plan/change-counts.js";
import { describeNamed, NO_NAMES, type PlanNames } from "./names.js";

/** How a kind shows itself (symbol, legend, colour, summary phrase). */
export function presentation(kind: string): KindPresentation {
  return mutatingKind(kind).presentation;
}

/** A change as every view names it ("complete step 20111", `complete step 20111 "Manager approval"`, "abort"). */
export function describeChange(change: PlannedChange, names: PlanNames = NO_NAMES): ChangeDescription {
  return describeNamed(change, names);
}

/**
 * Why matched instances have no change, one line per reason the action kinds gave (raw words: each view escapes):
 * `6 skipped: the step already holds these values`. None for a plan written before reasons were counted.
 */
export function skipLines(rule: RulePlanSummary): string[] {
  return Object.entries(rule.skipped_by_reason ?? {}).map(([reason, n]) => `${n} skipped: ${reason}`);
}

/**
 * A rule's changes left to later runs by its rollout limit (`limits.max_changes_per_run`), in the words every view
 * shows: `62 deferred by the rollout limit (20 of 82 this run)`; undefined when none were.
 */
export function deferredWords(rule: RulePlanSummary): string | undefined {
  const n = rule.deferred ?? 0;
  if (n <= 0) return undefined;
  return `${n} deferred by the rollout limit (${rule.changes} of ${rule.changes + n} this run)`;
}

/**
 * The workflows of a rule over several (`workflow:` a list or "*"): `workflows 1042, 1043` and those skipped, or
 * undefined for a rule of one workflow.
 */
export function workflowsWords(rule: RulePlanSummary): string | undefined {
  if (!rule.workflow_ids) return undefined;
  const skipped = rule.workflows_skipped ?? [];
  const planned = rule.workflow_ids.filter((id) => !skipped.some((s) => s.workflow_id === id));
  const list = planned.length > 0 ? `workflows ${planned.join(", ")}` : "no workflow";
  return skipped.length > 0
    ? `${list}; skipped ${skipped.map((s) => `${s.workflow_id} (${s.reason})`).join(", ")}`
    : list;
}

/** Mutating kinds that occur in the plan, in registry order (for legends). */
export function kindsUsed(plan: Plan): string[] {
  const counts = changeCounts(plan.changes);
  return MUTATING_KINDS.filter((k) => kindCount(counts, k) > 0);
}

/**
 * "Partial: synced 41,200 of ~100,000 instances; changes and reports cover only those" for a plan made with
 * --partial (docs/operating.md, "A partial plan"); undefined for any other plan.
 */
export function partialLine(plan: Plan): string | undefined {
  const p = plan.partial;
  if (!p) return undefined;
  const n = (v: number): string => v.toLocaleString("en-US");
  const synced =
    p.synced === null
      ? "the sync was cut"
      : `synced ${n(p.synced)}${p.total !== null && p.total >= p.synced ? ` of ~${n(p.total)}` : ""} instances`;
  const over = (p.rules_partial ?? []).map(
    (r) => `${r.rule} over ${n(r.selected)}${r.total !== null ? ` of ~${n(r.total)}` : ""} instances`,
  );
  const notes = [
    ...(over.length > 0 ? [`planned over part of their selection: ${over.join(", ")}`] : []),
    ...(p.rules_cut.length > 0 ? [`rules cut, with no changes: ${p.rules_cut.join(", ")}`] : []),
  ];
  const cut = notes.length > 0 ? ` (${notes.join("; ")})` : "";
  return `Partial: ${synced}; changes and reports cover only those${cut}. Apply refuses a partial plan.`;
}

export function summaryLine(plan: Plan): string {
  const parts: string[] = [];
  for (const k of MUTATING_KINDS) {
    const n = plan.summary[k] ?? 0;
    if (n > 0) parts.push(presentation(k).summary(n));
  }
  const r = plan.summary.reports;
  if (r > 0) parts.push(plural(r, "report"));
  const audit = changeCounts(plan.changes).audit;
  if (audit > 0) parts.push(`${audit} in audit (never applied)`);
  const deferred = plan.rules.reduce((n, rule) => n + (rule.deferred ?? 0), 0);
  if (deferred > 0) parts.push(`${deferred} deferred by the rollout limit`);
  const errors = plan.errors.length > 0 ? ` ${plural(plan.errors.length, "error")}.` : "";
  // a forecast says so wherever its summary shows (docs/forecast.md)
  const lead =
    plan.forecast_at !== undefined
      ? `Forecast for ${shortInstant(plan.forecast_at)}`
      : plan.partial
        ? "Partial plan"
        : "Plan";
  // every rule that ran failed: a report of nothing is no result (a key that sees none of the workflows, say)
  const ran = plan.rules.filter((r) => r.status !== "inactive");
  if (ran.length > 0 && plan.errors.length > 0 && ran.every((r) => r.status === "failed")) {
    return `${lead}: every rule failed (${ran.length === 1 ? "the one rule" : `all ${ran.length} rules`}): nothing planned.${errors}`;
  }
  return parts.length === 0 ? `${lead}: no changes.${errors}` : `${lead}: ${parts.join(", ")}.${errors}`;
}

/** A value as a reviewer reads it in a diff line. */
export function showValue(v: unknown): string {
  if (v === undefined) return "(not read)";
  if (v === null) return "(empty)";
  if (typeof v === "string") return JSON.stringify(v);
  return JSON.stringify(v);
}

/** Keys of a change's before/after in a stable order: step first, then fields as the rule lists them. */
export function diffKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])];
}
