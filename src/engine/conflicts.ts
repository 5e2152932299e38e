/**
 * Conflicts are judged per instance (docs/writing-rules.md): two rules changing the same step of one instance, or one
 * aborting an instance another acts on. A conflict is reported naming both rules and the instance, and both sides'
 * changes to that instance are left out: never resolved silently. Two rules that both abort one instance agree; the
 * instance is aborted once.
 */
import { mutatingKind } from "../actions/index.js";
import type { PlannedChange, PlanError } from "../plan/types.js";

export interface ConflictResult {
  changes: PlannedChange[];
  errors: PlanError[];
}

/** The same whole-instance change planned by two rules (two rules aborting one instance): sent once. */
function sameWholeInstance(a: PlannedChange, b: PlannedChange): boolean {
  return a.kind === b.kind && mutatingKind(a.kind).changeTarget(a) === "instance";
}

function clash(a: PlannedChange, b: PlannedChange): boolean {
  const ta = mutatingKind(a.kind).changeTarget(a);
  const tb = mutatingKind(b.kind).changeTarget(b);
  if (ta === "instance" || tb === "instance") return true;
  return ta.step === tb.step;
}

function describe(c: PlannedChange): string {
  return mutatingKind(c.kind).describe(c).effect;
}

export function resolveConflicts(changes: PlannedChange[]): ConflictResult {
  const byInstance = new Map<number, PlannedChange[]>();
  for (const c of changes) {
    const list = byInstance.get(c.instance_id);
    if (list) list.push(c);
    else byInstance.set(c.instance_id, [c]);
  }
  const dropped = new Set<PlannedChange>();
  const errors: PlanError[] = [];
  const kept: PlannedChange[] = [];
  for (const list of byInstance.values()) {
    if (list.length === 1) continue;
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i];
        const b = list[j];
        if (!a || !b) continue;
        if (sameWholeInstance(a, b)) {
          dropped.add(b); // the same abort, planned by two rules: send it once
          continue;
        }
        if (!clash(a, b)) continue;
        dropped.add(a);
        dropped.add(b);
        errors.push({
          code: "conflict",
          rule: a.rule,
          instance_id: a.instance_id,
          message:
            `conflict on instance ${a.instance_id}: rule "${a.rule}" ${describe(a)} and rule "${b.rule}" ${describe(b)}; ` +
            `neither change is planned`,
        });
      }
    }
  }
  for (const c of changes) if (!dropped.has(c)) kept.push(c);
  // an abort dropped as a duplicate must not hide a conflict with a third change: already handled pairwise above
  return { changes: kept, errors };
}
