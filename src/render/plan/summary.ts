/** The one summary line every format shares, e.g. `Plan: 12 steps to complete, 3 to save, 1 report.` */
import { MUTATING_KINDS, mutatingKind, type ChangeDescription, type KindPresentation } from "../../actions/index.js";
import type { Plan, PlannedChange } from "../../plan/types.js";

/** How a kind shows itself (symbol, legend, colour, summary phrase). */
export function presentation(kind: string): KindPresentation {
  return mutatingKind(kind).presentation;
}

/** A change as every view names it ("complete step 20111", "abort"). */
export function describeChange(change: PlannedChange): ChangeDescription {
  return mutatingKind(change.kind).describe(change);
}

/** Mutating kinds that occur in the plan, in registry order (for legends). */
export function kindsUsed(plan: Plan): string[] {
  return MUTATING_KINDS.filter((k) => plan.changes.some((ch) => ch.kind === k));
}

export function summaryLine(plan: Plan): string {
  const parts: string[] = [];
  for (const k of MUTATING_KINDS) {
    const n = plan.summary[k] ?? 0;
    if (n > 0) parts.push(presentation(k).summary(n));
  }
  const r = plan.summary.reports;
  if (r > 0) parts.push(`${r} ${r === 1 ? "report" : "reports"}`);
  const audit = plan.changes.filter((c) => c.audit === true).length;
  if (audit > 0) parts.push(`${audit} in audit (never applied)`);
  const errors = plan.errors.length > 0 ? ` ${plan.errors.length} ${plan.errors.length === 1 ? "error" : "errors"}.` : "";
  return parts.length === 0 ? `Plan: no changes.${errors}` : `Plan: ${parts.join(", ")}.${errors}`;
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
