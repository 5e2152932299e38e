/**
 * How many changes a plan holds of each kind, per rule and in audit mode, read in one pass and keeping no change.
 * The end of a run asks these several times (the summary line, the notification, the saved line, the views): a
 * filter per question over a plan of 150,000 changes made each change again per question and kept the ones it
 * matched. A plan whose changes are made as they are read (./lazy-changes.ts) carries the counts its planner
 * already knew, so no change is made for them at all.
 */
import type { PlannedChange } from "./types.js";

export interface RuleChangeCounts {
  changes: number;
  audit: number;
}

export interface ChangeCounts {
  total: number;
  /** changes in audit mode (never sent) */
  audit: number;
  /** per kind, in the order the plan's changes first show each */
  byKind: ReadonlyMap<string, number>;
  /** per rule, in the order the plan's changes first show each */
  byRule: ReadonlyMap<string, RuleChangeCounts>;
}

/** The counts a planner knew of the changes it handed over as a lazy array, by that array. */
const KNOWN = new WeakMap<object, ChangeCounts>();

/** Remembers `counts` as those of `changes` (which cannot change: ./lazy-changes.ts). */
export function knowCounts(changes: readonly PlannedChange[], counts: ChangeCounts): void {
  KNOWN.set(changes, counts);
}

/** The counts given with changes made as they are read, if any. */
export function countsKnown(changes: readonly PlannedChange[]): ChangeCounts | undefined {
  return KNOWN.get(changes);
}

/** Counts being gathered change by change, in plan order. */
export class ChangeCounter {
  total = 0;
  audit = 0;
  readonly byKind = new Map<string, number>();
  readonly byRule = new Map<string, RuleChangeCounts>();

  add(rule: string, kind: string, audit: boolean): void {
    this.total++;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
    let r = this.byRule.get(rule);
    if (!r) this.byRule.set(rule, (r = { changes: 0, audit: 0 }));
    r.changes++;
    if (audit) {
      this.audit++;
      r.audit++;
    }
  }

  counts(): ChangeCounts {
    return { total: this.total, audit: this.audit, byKind: this.byKind, byRule: this.byRule };
  }
}

/** The counts of `changes`: those their planner knew, or one pass over them. */
export function changeCounts(changes: readonly PlannedChange[]): ChangeCounts {
  const known = countsKnown(changes);
  if (known) return known;
  const counter = new ChangeCounter();
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as PlannedChange;
    counter.add(c.rule, c.kind, c.audit === true);
  }
  return counter.counts();
}

/** The first `max` changes that are sent (not audit), made one at a time as they are read, none kept. */
export function* sentChanges(changes: readonly PlannedChange[], max: number): Generator<PlannedChange> {
  let n = 0;
  for (let i = 0; i < changes.length && n < max; i++) {
    const c = changes[i] as PlannedChange;
    if (c.audit === true) continue;
    n++;
    yield c;
  }
}

/** Changes of `kind` (0 when none). */
export function kindCount(counts: ChangeCounts, kind: string): number {
  return counts.byKind.get(kind) ?? 0;
}

/** Audit changes of `rule` (0 when none). */
export function ruleAuditCount(counts: ChangeCounts, rule: string): number {
  return counts.byRule.get(rule)?.audit ?? 0;
}
