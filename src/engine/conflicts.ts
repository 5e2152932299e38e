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
  const { dropped, errors } = conflictsAmong(
    changes.length,
    (k) => changes[k]?.instance_id ?? 0,
    (k) => changes[k] as PlannedChange,
  );
  return { changes: changes.filter((_, k) => dropped[k] !== 1), errors };
}

/**
 * The same judgement over `n` changes known by position (src/engine/change-store.ts holds them as text): only the
 * changes of instances with several are made (`changeAt`), in the order given, one instance at a time. Returns which
 * positions are left out (1) and the errors, in the order a walk through the changes meets their instances.
 */
export function conflictsAmong(
  n: number,
  instanceAt: (k: number) => number,
  changeAt: (k: number) => PlannedChange,
): { dropped: Uint8Array; errors: PlanError[] } {
  const dropped = new Uint8Array(n);
  const errors: PlanError[] = [];
  const ids = new Float64Array(n);
  for (let k = 0; k < n; k++) ids[k] = instanceAt(k);
  // by instance, then position: an instance's changes side by side, in their order
  const byInstance = Uint32Array.from({ length: n }, (_, k) => k).sort(
    (a, b) => (ids[a] ?? 0) - (ids[b] ?? 0) || a - b,
  );
  const runs: Array<{ first: number; from: number; to: number }> = [];
  for (let from = 0; from < n;) {
    let to = from + 1;
    while (to < n && ids[byInstance[to] ?? 0] === ids[byInstance[from] ?? 0]) to++;
    if (to - from > 1) runs.push({ first: byInstance[from] ?? 0, from, to });
    from = to;
  }
  // instances in the order their first change comes, as a walk through the changes meets them
  runs.sort((a, b) => a.first - b.first);
  for (const run of runs) {
    const at = Array.from(byInstance.subarray(run.from, run.to));
    const list = at.map((k) => changeAt(k));
    const out = new Set<PlannedChange>();
    instanceConflicts(list, out, errors);
    list.forEach((c, j) => {
      if (out.has(c)) dropped[at[j] ?? 0] = 1;
    });
  }
  return { dropped, errors };
}
