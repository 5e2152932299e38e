/**
 * The `ordering` parameter of 4.2 / 4.6: parsing, per-instance sort keys and the comparator.
 *
 * Choices (the spec lists the values only):
 * - default ordering (no `ordering`): id ascending;
 * - several comma-separated values apply in turn; id ascending always breaks the remaining ties, so the order is total
 *   (cursor pagination needs that);
 * - null values (no deadline, still running for ended_time, never updated) sort after every value ascending and
 *   before every value descending (PostgreSQL's default);
 * - priority ranks Regular < H < V, so `-priority` lists the most urgent first; status sorts alphabetically
 *   (aborted < completed < running), name by code point;
 * - total_runtime of a running instance runs until the moment the first page was asked for (kept in the cursor).
 */
import { badRequest } from "./errors.js";
import { endedTimeOf, progressOf, runtimeOf, statusOf, type InstanceState } from "./state.js";

export const ORDER_FIELDS = [
  "name",
  "started_time",
  "last_updated_time",
  "status",
  "priority",
  "progress",
  "deadline",
  "ended_time",
  "total_runtime",
] as const;
export type OrderFieldName = (typeof ORDER_FIELDS)[number];

export interface OrderField {
  field: OrderFieldName;
  desc: boolean;
}

export type SortValue = number | string | null;
/** sort values of the ordering fields, then the id */
export type SortKey = SortValue[];

const PRIORITY_RANK = { H: 1, V: 2 } as const;

function isOrderField(s: string): s is OrderFieldName {
  return (ORDER_FIELDS as readonly string[]).includes(s);
}

/** Parses `ordering` values (each may hold comma-separated items); 400 on an unknown field. */
export function parseOrdering(values: readonly string[]): OrderField[] {
  const out: OrderField[] = [];
  for (const raw of values.flatMap((v) => v.split(","))) {
    const item = raw.trim();
    if (!item) continue;
    const desc = item.startsWith("-");
    const field = desc ? item.slice(1) : item;
    if (!isOrderField(field)) {
      throw badRequest(
        `Unknown ordering "${item}". Allowed: ${ORDER_FIELDS.join(", ")}, each optionally with a - prefix.`,
      );
    }
    if (!out.some((o) => o.field === field)) out.push({ field, desc });
  }
  return out;
}

/** Canonical text of an ordering, used as cache key and bound into cursors. */
export function orderingKey(order: readonly OrderField[]): string {
  return order.map((o) => (o.desc ? "-" : "") + o.field).join(",");
}

export function usesRuntime(order: readonly OrderField[]): boolean {
  return order.some((o) => o.field === "total_runtime");
}

function sortValue(inst: InstanceState, field: OrderFieldName, asOf: number): SortValue {
  switch (field) {
    case "name":
      return inst.name;
    case "started_time":
      return inst.startedTime;
    case "last_updated_time":
      return inst.lastUpdatedTime ?? inst.startedTime;
    case "status":
      return statusOf(inst);
    case "priority":
      return inst.priority === null ? 0 : PRIORITY_RANK[inst.priority];
    case "progress":
      return progressOf(inst);
    case "deadline":
      return inst.deadline;
    case "ended_time":
      return endedTimeOf(inst);
    case "total_runtime":
      return runtimeOf(inst, asOf);
  }
}

export function sortKeyOf(inst: InstanceState, order: readonly OrderField[], asOf: number): SortKey {
  const key: SortKey = order.map((o) => sortValue(inst, o.field, asOf));
  key.push(inst.id);
  return key;
}

function compareValues(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return 1; // nulls are "largest"
  if (b === null) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Compares two keys of the same ordering; the trailing id is always ascending. */
export function compareKeys(a: SortKey, b: SortKey, order: readonly OrderField[]): number {
  for (let i = 0; i < order.length; i++) {
    const c = compareValues(a[i] ?? null, b[i] ?? null);
    if (c !== 0) return (order[i] as OrderField).desc ? -c : c;
  }
  return compareValues(a[order.length] ?? null, b[order.length] ?? null);
}

/** A sorted view of a set of instances with their keys (parallel arrays). */
export interface SortedView {
  items: InstanceState[];
  keys: SortKey[];
}

export function buildSorted(
  instances: readonly InstanceState[],
  order: readonly OrderField[],
  asOf: number,
): SortedView {
  if (order.length === 0) {
    // default ordering: id ascending, which is how the store keeps each workflow's instances
    const items = [...instances];
    if (items.some((inst, k) => k > 0 && (items[k - 1] as InstanceState).id > inst.id))
      items.sort((a, b) => a.id - b.id);
    return { items, keys: items.map((inst) => [inst.id]) };
  }
  const pairs = instances.map((inst) => ({ inst, key: sortKeyOf(inst, order, asOf) }));
  pairs.sort((a, b) => compareKeys(a.key, b.key, order));
  return { items: pairs.map((p) => p.inst), keys: pairs.map((p) => p.key) };
}

/**
 * Moves one changed instance to its new place in a sorted view (O(n) array moves, no re-sort), so a mutation does not
 * make the next list request pay for a full sort.
 */
export function repositionInView(
  view: SortedView,
  inst: InstanceState,
  order: readonly OrderField[],
  asOf: number,
): void {
  const at = view.items.indexOf(inst);
  if (at >= 0) {
    view.items.splice(at, 1);
    view.keys.splice(at, 1);
  }
  const key = sortKeyOf(inst, order, asOf);
  const to = lowerBound(view, key, order, true);
  view.items.splice(to, 0, inst);
  view.keys.splice(to, 0, key);
}

/** First index whose key is strictly greater than `key` (or >= when `inclusive`), by binary search. */
export function lowerBound(view: SortedView, key: SortKey, order: readonly OrderField[], inclusive: boolean): number {
  let lo = 0,
    hi = view.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(view.keys[mid] as SortKey, key, order);
    if (c < 0 || (c === 0 && !inclusive)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
