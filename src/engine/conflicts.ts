/**
 * Conflicts are judged per instance (docs/writing-rules.md): two rules changing the same step of one instance, or one
 * aborting an instance another acts on. A conflict is reported naming both rules and the instance, and both sides'
 * changes to that instance are left out: never resolved silently. Two rules that both abort one instance agree; the
 * instance is aborted once.
 */
import { mutatingKind, type ChangeTarget } from "../actions/index.js";
import type { PlannedChange, PlanError } from "../plan/types.js";

export interface ConflictResult {
  changes: PlannedChange[];
  errors: PlanError[];
}

function targetOf(c: PlannedChange): ChangeTarget {
  return mutatingKind(c.kind).changeTarget(c);
}

function describe(c: PlannedChange): string {
  return mutatingKind(c.kind).describe(c).effect;
}

interface Seen {
  change: PlannedChange;
  /** its position in the instance's list: the earliest met is the one an error names */
  at: number;
}

/**
 * The changes of one instance, in plan order: which clash (all of them are left out) and one error for each change
 * that clashes with an earlier one, naming the earliest. Bucketed by target, not compared pair by pair: 2,000 rules
 * changing one step of one instance cost 2,000 look-ups, not 2 million comparisons and errors.
 */
function instanceConflicts(list: PlannedChange[], dropped: Set<PlannedChange>, errors: PlanError[]): void {
  // whether a change clashes depends on the whole list: what each target holds is counted first
  const perStep = new Map<number, number>();
  const perKind = new Map<string, number>();
  for (const c of list) {
    const t = targetOf(c);
    if (t === "instance") perKind.set(c.kind, (perKind.get(c.kind) ?? 0) + 1);
    else perStep.set(t.step, (perStep.get(t.step) ?? 0) + 1);
  }
  let firstStep: Seen | undefined;
  const firstOfStep = new Map<number, Seen>();
  const firstOfKind = new Map<string, Seen>();
  list.forEach((change, at) => {
    const t = targetOf(change);
    let met: Seen | undefined;
    const meets = (s: Seen | undefined): void => {
      if (s && (!met || s.at < met.at)) met = s;
    };
    if (t === "instance") {
      meets(firstStep);
      for (const [kind, s] of firstOfKind) if (kind !== change.kind) meets(s);
      const repeated = firstOfKind.has(change.kind);
      // the same whole-instance change planned again (two rules aborting one instance) agrees: sent once
      if (repeated || perStep.size > 0 || perKind.size > 1) dropped.add(change);
      if (!repeated) firstOfKind.set(change.kind, { change, at });
    } else {
      meets(firstOfStep.get(t.step));
      for (const s of firstOfKind.values()) meets(s);
      if ((perStep.get(t.step) ?? 0) > 1 || perKind.size > 0) dropped.add(change);
      if (!firstOfStep.has(t.step)) firstOfStep.set(t.step, { change, at });
      firstStep ??= { change, at };
    }
    const a = (met as Seen | undefined)?.change;
    if (!a) return;
    errors.push({
      code: "conflict",
      rule: a.rule,
      instance_id: a.instance_id,
      message: `conflict on instance ${a.instance_id}: rule "${a.rule}" ${describe(a)} and rule "${change.rule}" ${describe(change)}; neither change is planned`,
    });
  });
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
  for (const list of byInstance.values()) if (list.length > 1) instanceConflicts(list, dropped, errors);
  return { changes: changes.filter((c) => !dropped.has(c)), errors };
}
