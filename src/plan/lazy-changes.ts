/**
 * A plan's changes made only as they are read. A steady run of a tenant of a million instances may plan 150,000
 * changes; as objects, each with its request, before, after and precondition, they cost ~700 bytes apiece in the
 * heap until the plan is written. The planner keeps them as compact bytes instead (src/engine/change-store.ts) and
 * hands the plan an array that makes each change when it is read: the writer and the digest read a batch at a time.
 * Read like an array (index, length, iteration, the array methods, JSON.stringify); it cannot be changed: a change
 * read twice is two equal objects, so changing one changes nothing (mapChanges makes changed ones).
 */
import { isLazyRows, lazyItems } from "./lazy-rows.js";
import type { PlannedChange } from "./types.js";

const REFUSAL = "the changes of a plan cannot be changed in place";

export function lazyChanges(length: number, changeAt: (i: number) => PlannedChange): PlannedChange[] {
  return lazyItems(length, changeAt, REFUSAL);
}

/** Changes made as they are read (lazyChanges): changing them means making new ones (mapChanges). */
export function isLazyChanges(changes: readonly PlannedChange[]): boolean {
  return isLazyRows(changes);
}

/** Changes made as they are read, each through `fn` (a change is made anew on every read, so `fn` may change it). */
export function mapChanges(
  changes: readonly PlannedChange[],
  fn: (change: PlannedChange) => PlannedChange,
): PlannedChange[] {
  return lazyChanges(changes.length, (i) => fn(changes[i] as PlannedChange));
}
