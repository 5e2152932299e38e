/**
 * Wording every view of `plan --compare` shares: the closing summary and one change as a line with its inputs, steps
 * and fields named as the plan's views name them (render/plan/names.ts). Raw words: each view escapes for its medium.
 */
import { impactCounts, rolloutWords, type ChangedWrite, type ComparePlan } from "../../engine/impact.js";
import type { PlannedChange } from "../../plan/types.js";
import { plural } from "../../text/plural.js";
import { deferredWords, describeChange, diffKeys, showValue } from "../plan/summary.js";
import { keyLabel, NO_NAMES, stepName, type PlanNames } from "../plan/names.js";

/** `Impact since main (0123456789ab): 2 rules touched, +37 newly affected, -11 no longer, 5 write other values; 3 unchanged rules not planned.` */
export function impactSummary(plan: ComparePlan): string {
  const t = plan.impact.reduce(
    (s, i) => {
      const c = impactCounts(i);
      return {
        added: s.added + c.added,
        removed: s.removed + c.removed,
        changed: s.changed + c.changed,
        deferred: s.deferred + (c.deferred ?? 0),
        no_longer_deferred: s.no_longer_deferred + (c.no_longer_deferred ?? 0),
      };
    },
    { added: 0, removed: 0, changed: 0, deferred: 0, no_longer_deferred: 0 },
  );
  const head = `Impact since ${plan.compare.ref} (${plan.compare.commit.slice(0, 12)})`;
  const rest =
    plan.compare.unchanged > 0
      ? `; ${plural(plan.compare.unchanged, "unchanged rule", "unchanged rules")} not planned`
      : "";
  const errors = plan.errors.length > 0 ? ` ${plural(plan.errors.length, "error", "errors")}.` : "";
  // a rollout limit: the working tree's version plans only part of what it matches this run
  const deferred = plan.rules
    .flatMap((r) => {
      const w = deferredWords(r);
      return w ? [`; ${r.name}: ${w}`] : [];
    })
    .join("");
  if (plan.impact.length === 0) return `${head}: no rule was added, edited or removed${rest}${deferred}.${errors}`;
  return `${head}: ${plural(plan.impact.length, "rule", "rules")} touched, +${t.added} newly affected, -${t.removed} no longer, ${t.changed} write other values${rolloutWords(t)}${rest}${deferred}.${errors}`;
}

/** `#123 "Taxi to the airport": complete step 20111 "Manager approval"` */
export function changeTitle(c: PlannedChange, names: PlanNames = NO_NAMES): string {
  return `#${c.instance_id} ${JSON.stringify(c.instance_name)}: ${describeChange(c, names).label}${c.audit === true ? " (audit)" : ""}`;
}

/** What a change writes, one `key: value` per input (the values the version that plans it would write). */
export function writes(c: PlannedChange, names: PlanNames = NO_NAMES): string[] {
  return diffKeys({}, c.after).map((k) => `${keyLabel(names, c, k)}: ${showValue(c.after[k])}`);
}

/** The title of a change both versions plan (its kind's words need the change's own shape: the `after` version's). */
export function changedTitle(
  w: ChangedWrite,
  after: PlannedChange | undefined,
  rule: string,
  names: PlanNames = NO_NAMES,
): string {
  const step = stepName(names, { rule, ...(w.step_id !== undefined ? { step_id: w.step_id } : {}) });
  const what = after
    ? describeChange(after, names).label
    : w.step_id !== undefined
      ? `${w.kind} step ${w.step_id}${step !== undefined ? ` ${JSON.stringify(step)}` : ""}`
      : w.kind;
  return `#${w.instance_id} ${JSON.stringify(w.instance_name)}: ${what}`;
}

/** One `key: before → after` per input the two versions write differently. */
export function differences(
  w: ChangedWrite,
  rule: string,
  names: PlanNames = NO_NAMES,
): Array<{ key: string; before: string; after: string }> {
  // an input only one version writes shows as not written on the other side
  const show = (v: unknown): string => (v === undefined ? "(not written)" : showValue(v));
  const ref = { rule, ...(w.step_id !== undefined ? { step_id: w.step_id } : {}) };
  return diffKeys(w.before, w.after).map((key) => ({
    key: keyLabel(names, ref, key),
    before: show(w.before[key]),
    after: show(w.after[key]),
  }));
}

/** The working tree's change behind a changed write (for its kind's words), from the plan's changes. */
export function changeIndex(plan: ComparePlan): (rule: string, w: ChangedWrite) => PlannedChange | undefined {
  const byKey = new Map<string, PlannedChange>();
  for (const c of plan.changes) byKey.set(`${c.rule}:${c.kind}:${c.instance_id}:${c.step_id ?? ""}`, c);
  return (rule, w) => byKey.get(`${rule}:${w.kind}:${w.instance_id}:${w.step_id ?? ""}`);
}
