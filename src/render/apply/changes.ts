/**
 * Applied changes as people read them, one line each (docs/contracts.md, "Day one"; for watch cycles, "The watcher"):
 * `✓ #100071 complete step 20111 "Manager approval" (rule auto-approve-small-expenses)`. `apply plan.json`,
 * `apply --auto-approve` and every watch cycle print their changes through these functions, so the three read alike.
 * Lines come out terminal-safe (src/render/escape.ts): names and rule names are data.
 */
import { kindOrder } from "../../actions/index.js";
import type { ChangeOutcome } from "../../apply/outcome.js";
import { plural } from "../../text/plural.js";
import type { Plan, PlannedChange } from "../../plan/types.js";
import { textSafe } from "../escape.js";
import { describeNamed, NO_NAMES, planNames, type PlanNames } from "../plan/names.js";
import { presentation } from "../plan/summary.js";

/** Lines of applied changes a text summary shows; the JSON result (`--format json`) and the journal hold every one. */
export const MAX_CHANGE_LINES = 1000;

/** The names a plan carries, for the lines of its changes (a plan from before names: ids alone). */
export function namesOf(plan: Pick<Plan, "rules" | "names">): PlanNames {
  return planNames(plan);
}

/**
 * One change: its kind's symbol, the instance, the change in its kind's words with its step named, and its rule.
 * The instance's name is left out: `apply plan.json` reads changes without it (src/plan/read.ts, compact), and the
 * line must read the same whichever way the plan came.
 */
export function changeLine(change: PlannedChange, names: PlanNames = NO_NAMES): string {
  const what = describeNamed(change, names).label;
  return textSafe(
    `${presentation(change.kind).symbol} #${change.instance_id} ${what} (rule ${change.rule})${change.audit === true ? " (audit)" : ""}`,
  );
}

/**
 * Changes in the order a plan lists them (rule by rule as the plan lists its rules, then instance, kind and step),
 * whatever order they were settled in: batches and concurrency settle them in another.
 */
export function inPlanOrder(plan: Pick<Plan, "rules"> | undefined): (a: PlannedChange, b: PlannedChange) => number {
  const rank = new Map((plan?.rules ?? []).map((r, i) => [r.name, i]));
  return (a, b) =>
    (rank.get(a.rule) ?? rank.size) - (rank.get(b.rule) ?? rank.size) ||
    a.instance_id - b.instance_id ||
    kindOrder(a.kind) - kindOrder(b.kind) ||
    (a.step_id ?? 0) - (b.step_id ?? 0);
}

/**
 * The changes a run applied, one line each in plan order (`order`, e.g. inPlanOrder), under a heading; at most `max`
 * of them, then how many more and where all of them are. No lines when nothing was applied.
 */
export function appliedLines(
  outcomes: readonly ChangeOutcome[],
  names: PlanNames = NO_NAMES,
  opts: { max?: number; indent?: string; where?: string; order?: (a: PlannedChange, b: PlannedChange) => number } = {},
): string[] {
  const max = opts.max ?? MAX_CHANGE_LINES;
  const indent = opts.indent ?? "  ";
  const applied = outcomes.filter((o) => o.status === "applied");
  if (opts.order) {
    const order = opts.order;
    applied.sort((a, b) => order(a.change, b.change));
  }
  if (applied.length === 0) return [];
  const out = [`Applied (${applied.length}):`];
  for (const o of applied.slice(0, max)) out.push(`${indent}${changeLine(o.change, names)}`);
  if (applied.length > max)
    out.push(
      `${indent}… ${plural(applied.length - max, "more change")}${opts.where ? `: ${textSafe(opts.where)} lists every one` : ""}`,
    );
  return out;
}
