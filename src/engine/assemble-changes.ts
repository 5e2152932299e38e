/**
 * The plan's changes chosen and ordered by position, without making them (./change-store.ts): the rollout limit,
 * conflicts and the plan's order read the keys kept beside each change's text; only the changes of instances with
 * several are made, to judge their conflicts. The same choices and order as the same steps over arrays of changes.
 */
import { kindOrder } from "../actions/index.js";
import type { PlanError, PlannedChange } from "../plan/types.js";
import type { ChangeStore } from "./change-store.js";
import { conflictsAmong } from "./conflicts.js";
import { grown } from "../model/number-column.js";

/**
 * Changes of several stores by position: the `k`th is change `item[k]` of `stores[store[k]]`. Grown as changes are
 * added; two numbers a change.
 */
export class ChangeRefs {
  private storeOf = new Uint32Array(0);
  private itemOf = new Uint32Array(0);
  private n = 0;

  constructor(readonly stores: readonly ChangeStore[]) {}

  get length(): number {
    return this.n;
  }

  push(store: number, item: number): void {
    this.storeOf = grown(this.storeOf, this.n + 1, 256);
    this.itemOf = grown(this.itemOf, this.n + 1, 256);
    this.storeOf[this.n] = store;
    this.itemOf[this.n] = item;
    this.n++;
  }

  storeAt(k: number): ChangeStore {
    return this.stores[this.storeOf[k] ?? 0] as ChangeStore;
  }

  storeIndexAt(k: number): number {
    return this.storeOf[k] ?? 0;
  }

  itemAt(k: number): number {
    return this.itemOf[k] ?? 0;
  }

  /** The `k`th change, made from its text. */
  changeAt(k: number): PlannedChange {
    return this.storeAt(k).at(this.itemAt(k));
  }

  /** These positions, in this order, as a list of their own. */
  pick(positions: readonly number[]): ChangeRefs {
    const out = new ChangeRefs(this.stores);
    for (const k of positions) out.push(this.storeIndexAt(k), this.itemAt(k));
    return out;
  }
}

/**
 * A rollout limit over `n` changes (src/engine/assemble.ts, rolloutSplit): positions kept and deferred, instances
 * oldest first (by started_time, ties by id; unknown starts last), an instance's changes together in their order.
 */
export function rolloutOrder(
  n: number,
  instanceAt: (k: number) => number,
  limit: number,
  startedTimes: ReadonlyMap<number, string>,
): { kept: number[]; deferred: number[] } {
  const ids = new Float64Array(n);
  const started = new Float64Array(n);
  const known = new Map<number, number>();
  for (let k = 0; k < n; k++) {
    const id = instanceAt(k);
    ids[k] = id;
    let t = known.get(id);
    if (t === undefined) {
      t = Date.parse(startedTimes.get(id) ?? "");
      if (Number.isNaN(t)) t = Number.POSITIVE_INFINITY;
      known.set(id, t);
    }
    started[k] = t;
  }
  known.clear();
  // oldest first, ties by id (an unknown start against another: Infinity - Infinity is NaN, so by id), then position
  const order = Array.from({ length: n }, (_, k) => k).sort(
    (a, b) => (started[a] ?? 0) - (started[b] ?? 0) || (ids[a] ?? 0) - (ids[b] ?? 0) || a - b,
  );
  const kept: number[] = [];
  const deferred: number[] = [];
  let full = false;
  for (let from = 0; from < n;) {
    let to = from + 1;
    while (to < n && ids[order[to] ?? 0] === ids[order[from] ?? 0]) to++;
    // once one instance does not fit, the younger ones wait too: the order stays oldest first across runs
    if (!full && kept.length + (to - from) <= limit) for (let j = from; j < to; j++) kept.push(order[j] ?? 0);
    else {
      full = true;
      for (let j = from; j < to; j++) deferred.push(order[j] ?? 0);
    }
    from = to;
  }
  return { kept, deferred };
}

/**
 * The candidates' conflicts judged (audit changes are never sent, so they cannot clash with what is), then the plan's
 * order: by rule (`rank`), instance, kind, step; ties keep the order of the sent changes, then the audit ones.
 */
export function orderedChanges(
  candidate: ChangeRefs,
  rank: (rule: string) => number,
): { changes: ChangeRefs; errors: PlanError[] } {
  const sent: number[] = [];
  const audit: number[] = [];
  for (let k = 0; k < candidate.length; k++) (candidate.storeAt(k).auditAt(candidate.itemAt(k)) ? audit : sent).push(k);
  const { dropped, errors } = conflictsAmong(
    sent.length,
    (j) => {
      const k = sent[j] ?? 0;
      return candidate.storeAt(k).instanceAt(candidate.itemAt(k));
    },
    (j) => candidate.changeAt(sent[j] ?? 0),
  );
  const order = [...sent.filter((_, j) => dropped[j] !== 1), ...audit];
  const ranks = new Float64Array(candidate.length);
  const ids = new Float64Array(candidate.length);
  const kinds = new Float64Array(candidate.length);
  const steps = new Float64Array(candidate.length);
  for (const k of order) {
    const store = candidate.storeAt(k);
    const i = candidate.itemAt(k);
    ranks[k] = rank(store.ruleAt(i));
    ids[k] = store.instanceAt(i);
    kinds[k] = kindOrder(store.kindAt(i));
    steps[k] = store.stepAt(i) ?? 0;
  }
  // a stable sort: equal keys keep the order above
  order.sort(
    (a, b) =>
      (ranks[a] ?? 0) - (ranks[b] ?? 0) ||
      (ids[a] ?? 0) - (ids[b] ?? 0) ||
      (kinds[a] ?? 0) - (kinds[b] ?? 0) ||
      (steps[a] ?? 0) - (steps[b] ?? 0),
  );
  return { changes: candidate.pick(order), errors };
}
