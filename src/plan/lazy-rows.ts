/**
 * A plan's report rows made only as they are read. A report holds a row per matched instance (a quarter of a tenant
 * of a million is 250,000 rows); kept as objects, each costs a few hundred bytes while the plan is digested and
 * written, so the planner keeps them compact (src/actions/report-entries.ts) and hands the plan an array that makes
 * each row when it is read: the writer and the digest read a batch at a time, the views only the first few. Read
 * like an array (index, length, iteration, the array methods, JSON.stringify); it cannot be changed.
 */
import type { FoldedSearch } from "../text/folded-search.js";

const LAZY = new WeakSet<object>();

/** Whether some string of the items may hold a needle, asked of what they are made from (see itemsMayHold). */
export type MayHold = (search: FoldedSearch) => boolean;
const SEARCHES = new WeakMap<object, MayHold>();

/**
 * False only when no string of any item (a value or a key, at any depth) can hold `search`'s needle in any case,
 * as told by what the items are made from without making them (the API key's mask, src/engine/mask-plan.ts). True
 * when some may, or when the items cannot tell (a plain array).
 */
export function itemsMayHold(items: readonly unknown[], search: FoldedSearch): boolean {
  const mayHold = SEARCHES.get(items);
  return mayHold ? mayHold(search) : true;
}

/** Rows made as they are read (lazyRows): changing them means making new rows (mapRows), not writing into them. */
export function isLazyRows(rows: readonly unknown[]): boolean {
  return LAZY.has(rows);
}

/** Rows made as they are read, each through `fn` (a row is made anew on every read, so `fn` may change it). */
export function mapRows(
  rows: ReadonlyArray<Record<string, unknown>>,
  fn: (row: Record<string, unknown>) => Record<string, unknown>,
): Array<Record<string, unknown>> {
  return lazyRows(rows.length, (i) => fn(rows[i] ?? {}));
}

/** `mayHold`, when given, answers itemsMayHold for these rows from what they are made from. */
export function lazyRows(
  length: number,
  rowAt: (i: number) => Record<string, unknown>,
  mayHold?: MayHold,
): Array<Record<string, unknown>> {
  return lazyItems(length, rowAt, "the rows of a planned report cannot be changed", mayHold);
}

/**
 * An array of `length` items made as they are read, each by `itemAt` (anew on every read), which refuses to be
 * changed with `refusal`: a plan's report rows (above) and its changes (src/plan/lazy-changes.ts).
 */
export function lazyItems<T extends object>(
  length: number,
  itemAt: (i: number) => T,
  refusal: string,
  mayHold?: MayHold,
): T[] {
  const target: T[] = [];
  // a length without elements: no backing store is allocated for the holes
  target.length = length;
  const index = (key: string | symbol): number | undefined => {
    if (typeof key !== "string") return undefined;
    const n = Number(key);
    return Number.isInteger(n) && n >= 0 && n < length && String(n) === key ? n : undefined;
  };
  const refuse = (): boolean => {
    throw new TypeError(refusal);
  };
  const items = new Proxy(target, {
    get(t, key, receiver) {
      const i = index(key);
      return i === undefined ? Reflect.get(t, key, receiver) : itemAt(i);
    },
    has(t, key) {
      return index(key) !== undefined || Reflect.has(t, key);
    },
    ownKeys(t) {
      return [...Array.from({ length }, (_, i) => String(i)), ...Reflect.ownKeys(t)];
    },
    getOwnPropertyDescriptor(t, key) {
      const i = index(key);
      if (i === undefined) return Reflect.getOwnPropertyDescriptor(t, key);
      return { value: itemAt(i), writable: false, enumerable: true, configurable: true };
    },
    set: refuse,
    defineProperty: refuse,
    deleteProperty: refuse,
  });
  LAZY.add(items);
  if (mayHold) SEARCHES.set(items, mayHold);
  return items;
}
