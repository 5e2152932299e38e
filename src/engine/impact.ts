/**
 * What a rule edit changes (`plan --compare`; docs/contracts.md, "What a rule edit changes"): the changes one version of a rule plans
 * against the changes the other version plans on the same live data. Pure: two lists of changes in, the impact out.
 *
 * A change is identified by instance, kind and step; the same identity in both versions is a change that "remains",
 * and it "writes other values" when its `after` differs by meaning (src/model/values.ts: numbers, instants, sets),
 * input by input, or when the rule moved between audit and enforce.
 */
import { dayLabel } from "../text/instant.js";
import { sameValue } from "../model/values.js";
import type { Plan, PlannedChange } from "../plan/types.js";
import type { ChangedWrite, CompareKeys, ImpactStatus, RuleImpact } from "../plan/compare-schema.js";

export type { ChangedWrite, CompareKeys, ImpactStatus, RuleImpact } from "../plan/compare-schema.js";

export type ComparePlan = Plan & CompareKeys;

/** The pseudo-input that shows a move between audit (shown, never sent) and enforce. */
const MODE_KEY = "mode";

/** Identity of a change within one rule's plan; a rule planning two changes of one identity keeps them in order. */
function identities(changes: readonly PlannedChange[]): Map<string, PlannedChange> {
  const out = new Map<string, PlannedChange>();
  for (const c of changes) {
    const base = `${c.kind}:${c.instance_id}:${c.step_id ?? ""}`;
    let key = base;
    for (let n = 1; out.has(key); n++) key = `${base}#${n}`;
    out.set(key, c);
  }
  return out;
}

const modeOf = (c: PlannedChange): string => (c.audit === true ? "audit" : "enforce");

/** The inputs two versions of one change write differently, or undefined when they write the same by meaning. */
function writeDifference(before: PlannedChange, after: PlannedChange): ChangedWrite | undefined {
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before.after), ...Object.keys(after.after)])) {
    const x = before.after[key];
    const y = after.after[key];
    if (!sameValue(x, y)) {
      b[key] = x;
      a[key] = y;
    }
  }
  if (modeOf(before) !== modeOf(after)) {
    b[MODE_KEY] = modeOf(before);
    a[MODE_KEY] = modeOf(after);
  }
  if (Object.keys(a).length === 0 && Object.keys(b).length === 0) return undefined;
  return {
    instance_id: after.instance_id,
    instance_name: after.instance_name,
    kind: after.kind,
    ...(after.step_id !== undefined ? { step_id: after.step_id } : {}),
    before: b,
    after: a,
  };
}

/**
 * The instances each version's rollout limit deferred (`rules[].deferred_ids`): a rollout keeps an instance's changes
 * together, so a change one version plans and the other defers is known by its instance.
 */
export interface Deferrals {
  /** deferred by the ref's version */
  before?: ReadonlySet<number>;
  /** deferred by the working tree's version */
  after?: ReadonlySet<number>;
}

/**
 * The impact of one rule: `before` the changes its version at the ref plans, `after` those of the working tree's.
 * A change only one version plans this run, where the other's rollout limit deferred its instance, is wanted by both:
 * it is `deferred` or `no_longer_deferred`, never newly affected or no longer planned.
 */
export function ruleImpact(
  rule: string,
  status: ImpactStatus,
  before: readonly PlannedChange[],
  after: readonly PlannedChange[],
  deferrals: Deferrals = {},
): RuleImpact {
  const old = identities(before);
  const now = identities(after);
  const out: RuleImpact = { rule, status, added: [], removed: [], changed: [] };
  const deferred: PlannedChange[] = [];
  const undeferred: PlannedChange[] = [];
  for (const [key, c] of now) {
    const prev = old.get(key);
    if (!prev) (deferrals.before?.has(c.instance_id) ? undeferred : out.added).push(c);
    else {
      const d = writeDifference(prev, c);
      if (d) out.changed.push(d);
    }
  }
  for (const [key, c] of old) if (!now.has(key)) (deferrals.after?.has(c.instance_id) ? deferred : out.removed).push(c);
  // added keys only when they hold something, so an impact without a rollout reads as before
  if (deferred.length > 0) out.deferred = deferred;
  if (undeferred.length > 0) out.no_longer_deferred = undeferred;
  return out;
}

/**
 * The impact of every touched rule, from the plan of the versions at the ref and the plan of the working tree's
 * (each holding its rules under their own names). Untouched rules have no entry.
 */
export function planImpact(
  touched: ReadonlyArray<{ rule: string; status: ImpactStatus }>,
  before: Plan,
  after: Plan,
): RuleImpact[] {
  const byRule = (plan: Plan): Map<string, PlannedChange[]> => {
    const m = new Map<string, PlannedChange[]>();
    for (const c of plan.changes) {
      const list = m.get(c.rule);
      if (list) list.push(c);
      else m.set(c.rule, [c]);
    }
    return m;
  };
  const old = byRule(before);
  const now = byRule(after);
  const deferredIds = (plan: Plan, rule: string): ReadonlySet<number> | undefined => {
    const ids = plan.rules.find((r) => r.name === rule)?.deferred_ids;
    return ids && ids.length > 0 ? new Set(ids) : undefined;
  };
  return touched.map((t) => {
    const b = deferredIds(before, t.rule);
    const a = deferredIds(after, t.rule);
    return ruleImpact(t.rule, t.status, old.get(t.rule) ?? [], now.get(t.rule) ?? [], {
      ...(b ? { before: b } : {}),
      ...(a ? { after: a } : {}),
    });
  });
}

export interface ImpactCounts {
  added: number;
  removed: number;
  changed: number;
  /** present when any: changes the working tree's rollout limit defers, and those the ref's deferred that it plans this run */
  deferred?: number;
  no_longer_deferred?: number;
}

export function impactCounts(i: RuleImpact): ImpactCounts {
  return {
    added: i.added.length,
    removed: i.removed.length,
    changed: i.changed.length,
    ...(i.deferred ? { deferred: i.deferred.length } : {}),
    ...(i.no_longer_deferred ? { no_longer_deferred: i.no_longer_deferred.length } : {}),
  };
}

/** Every entry of one rule's impact: the changes each detail view lists. */
export function impactSize(i: RuleImpact): number {
  return (
    i.added.length +
    i.removed.length +
    i.changed.length +
    (i.deferred?.length ?? 0) +
    (i.no_longer_deferred?.length ?? 0)
  );
}

/**
 * True when any touched rule plans anything differently (the `--detailed-exitcode` 2 of `plan --compare`): a change
 * moved between this run and a later one by a rollout limit is a difference too.
 */
export function hasImpact(impact: readonly RuleImpact[]): boolean {
  return impact.some((i) => impactSize(i) > 0);
}

/** `, 62 deferred by the rollout limit, 5 no longer deferred`: the rollout's part of a lead line, empty without one. */
export function rolloutWords(c: { deferred?: number; no_longer_deferred?: number }): string {
  return [
    c.deferred ? `, ${c.deferred} deferred by the rollout limit` : "",
    c.no_longer_deferred ? `, ${c.no_longer_deferred} no longer deferred` : "",
  ].join("");
}

/** `in the next 7 days time alone adds +412 (first on Tue 1 Dec)`, for a rule whose forecast moves; else undefined. */
export function forecastLine(i: RuleImpact): string | undefined {
  const f = i.forecast;
  if (!f || f.added + f.removed === 0) return undefined;
  const what = [f.added > 0 ? `adds +${f.added}` : "", f.removed > 0 ? `takes away -${f.removed}` : ""]
    .filter(Boolean)
    .join(" and ");
  return `in the next ${f.horizon} time alone ${what}${f.first_at ? ` (first on ${dayLabel(f.first_at)})` : ""}`;
}

/**
 * The contract's lead line: `approve-small-expenses (edited): +37 newly affected, -2 no longer, 5 write other values`,
 * then (only for a rule whose rollout limit moved changes) the changes moved between runs.
 */
export function impactLine(i: RuleImpact): string {
  return `${i.rule} (${i.status}): +${i.added.length} newly affected, -${i.removed.length} no longer, ${i.changed.length} write other values${rolloutWords(impactCounts(i))}`;
}
