/**
 * A plan's changes made only as they are read. A steady run of a tenant of a million instances may plan 150,000
 * changes; as objects, each with its request, before, after and precondition, they cost ~700 bytes apiece in the
 * heap until the plan is written. The planner keeps them as compact bytes instead (src/engine/change-store.ts) and
 * hands the plan an array that makes each change when it is read: the writer and the digest read a batch at a time.
 * Read like an array (index, length, iteration, the array methods, JSON.stringify); it cannot be changed: a change
 * read twice is two equal objects, so changing one changes nothing (mapChanges makes changed ones).
 */
import { isLazyRows, lazyItems, type MayHold } from "./lazy-rows.js";
import type { PlannedChange } from "./types.js";
import { countsKnown, knowCounts, type ChangeCounts } from "./change-counts.js";

const REFUSAL = "the changes of a plan cannot be changed in place";

/**
 * Changes made as they are read; `counts`, when given, are what the planner knows of them without making them
 * (rule, kind and audit of each, counted in plan order): change-counts.ts answers from them. `mayHold`, when given,
 * answers itemsMayHold (./lazy-rows.ts) for them.
 */
export function lazyChanges(
  length: number,
  changeAt: (i: number) => PlannedChange,
  counts?: ChangeCounts,
  mayHold?: MayHold,
): PlannedChange[] {
  const items = lazyItems(length, changeAt, REFUSAL, mayHold);
  if (counts) knowCounts(items, counts);
  return items;
}

/** Changes made as they are read (lazyChanges): changing them means making new ones (mapChanges). */
export function isLazyChanges(changes: readonly PlannedChange[]): boolean {
  return isLazyRows(changes);
}

/**
 * Changes made as they are read, each through `fn` (a change is made anew on every read, so `fn` may change it).
 * `fn` that keeps every change's rule, kind and audit flag as they were says so with `keepsCounts`: the counts known
 * of `changes` hold for the new ones too.
 */
export function mapChanges(
  changes: readonly PlannedChange[],
  fn: (change: PlannedChange) => PlannedChange,
  keepsCounts = false,
): PlannedChange[] {
  const known = keepsCounts ? countsKnown(changes) : undefined;
  return lazyChanges(changes.length, (i) => fn(changes[i] as PlannedChange), known);
}
