/**
 * Pure reasoning about one instance listing between two runs (docs/operating.md, State between runs): which of its parameters are the
 * same, which are bounds that moved with the clock, and which lists bring a cached answer up to date.
 *
 * An instance whose last_updated_time is older than the previous run has the same attributes as then (docs/service.md,
 * "State between runs"), so only a moving time bound can move it into or out of the selection:
 * - `X_before: now+d` moves later: instances with X in (b0, b1] may enter. Listed: the current query with `X_after`
 *   raised to b0 (inclusive overlap is harmless: a union).
 * - `X_after: now+d` moves later: instances with X in [a0, a1) leave. Listed: the previous query with X narrowed to
 *   [a0, a1 - 1 ms], and those ids dropped (times carry millisecond precision).
 * Anything the reasoning does not cover (an ordering, a page size, a run time that grows with the clock, a step
 * deadline bound that moved after, bounds that moved back) is answered by listing in full.
 */
import type { InstanceListQuery } from "../api/index.js";
import { DATE_FIELDS } from "../model/date-fields.js";

const DATE_PARAMS = new Set(DATE_FIELDS.flatMap((f) => [`${f}_after`, `${f}_before`]));
/** parameters whose meaning may change with no change to the instance, or that shape pages rather than the set */
const UNSAFE = new Set(["ordering", "cursor", "total_runtime_min", "total_runtime_max", "lead_user"]);

export type QueryValue = string | number | boolean | Array<string | number>;
export type CanonicalQuery = Record<string, QueryValue>;

/** Drops what the wire drops (null, undefined, empty arrays) and orders keys, so equal questions compare equal. */
export function canonicalQuery(query: InstanceListQuery): CanonicalQuery {
  const out: CanonicalQuery = {};
  for (const key of Object.keys(query).sort()) {
    const v = query[key];
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) {
      if (v.length === 0) continue;
      out[key] = v.map((x) => (typeof x === "number" ? x : String(x)));
    } else out[key] = v;
  }
  return out;
}

export function isDateParam(key: string): boolean {
  return DATE_PARAMS.has(key);
}

/** The part of a query that must be equal between runs: every parameter but the date bounds (by name only). */
export function shapeKey(processId: number, q: CanonicalQuery): string {
  const fixed: Record<string, QueryValue | "date"> = {};
  for (const [k, v] of Object.entries(q)) fixed[k] = isDateParam(k) ? "date" : v;
  return `${processId}:${JSON.stringify(fixed)}`;
}

/** Whether a listing can be brought up to date by slices: no ordering, default pages, nothing that drifts. */
export function sliceable(q: CanonicalQuery): boolean {
  for (const k of Object.keys(q)) if (UNSAFE.has(k)) return false;
  if (q.page_size !== undefined && Number(q.page_size) !== 500) return false;
  return true;
}

function time(v: QueryValue | undefined): number | undefined {
  if (typeof v !== "string") return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

export interface Movement {
  /** every date bound is equal or moved by exactly the clock's step */
  ok: boolean;
  /** bounds that moved: name, previous and current value (epoch ms) */
  moved: Array<{ key: string; from: number; to: number }>;
}

/**
 * How the date bounds of `current` (asked at `now`) relate to `previous` (asked at `then`): each one is equal (a fixed
 * date) or moved by exactly now − then (a relative one). Anything else means another question.
 */
export function movement(previous: CanonicalQuery, then: number, current: CanonicalQuery, now: number): Movement {
  const step = now - then;
  const moved: Movement["moved"] = [];
  for (const [k, v] of Object.entries(current)) {
    if (!isDateParam(k)) continue;
    const a = time(previous[k]);
    const b = time(v);
    if (a === undefined || b === undefined) return { ok: false, moved: [] };
    if (a === b) continue;
    if (b - a !== step || step < 0) return { ok: false, moved: [] };
    moved.push({ key: k, from: a, to: b });
  }
  for (const k of Object.keys(previous))
    if (isDateParam(k) && current[k] === undefined) return { ok: false, moved: [] };
  return { ok: true, moved };
}

const iso = (t: number): string => new Date(t).toISOString();

export interface Slice {
  /** instances listed by `query` join the selection (entering) or leave it (leaving) */
  effect: "enter" | "leave";
  query: CanonicalQuery;
  why: string;
  /** a leaving slice: the date field whose `_after` bound moved, and the range that leaves (inclusive, epoch ms) */
  range?: { field: string; from: number; to: number };
}

/** The lists that bring a cached answer to `previous` up to date for `current`, or undefined when that cannot be done. */
export function slices(
  previous: CanonicalQuery,
  current: CanonicalQuery,
  moved: Movement["moved"],
): Slice[] | undefined {
  const out: Slice[] = [];
  for (const m of moved) {
    if (m.to < m.from) return undefined;
    const field = m.key.replace(/_(after|before)$/, "");
    if (m.key.endsWith("_before")) {
      const afterKey = `${field}_after`;
      const after = Math.max(time(current[afterKey]) ?? -Infinity, m.from);
      out.push({
        effect: "enter",
        query: { ...current, [afterKey]: iso(after) },
        why: `${m.key} moved from ${iso(m.from)} to ${iso(m.to)}`,
      });
    } else {
      // any active step's deadline may keep an instance in: a narrower range cannot tell who left
      if (field === "step_deadline") return undefined;
      const beforeKey = `${field}_before`;
      const before = Math.min(time(previous[beforeKey]) ?? Infinity, m.to - 1);
      if (before < m.from) continue;
      out.push({
        effect: "leave",
        query: { ...previous, [m.key]: iso(m.from), [beforeKey]: iso(before) },
        why: `${m.key} moved from ${iso(m.from)} to ${iso(m.to)}`,
        range: { field, from: m.from, to: before },
      });
    }
  }
  return out;
}

/** The current query narrowed to instances updated since `since` (what changed since the last run). */
export function changedQuery(current: CanonicalQuery, since: number): CanonicalQuery {
  const after = Math.max(time(current.last_updated_time_after) ?? -Infinity, since);
  return { ...current, last_updated_time_after: iso(after) };
}

/**
 * Whether a query we built (a slice, the changed part of a selection) can hold nothing: a date field bounded after a
 * later instant than it is bounded before (bounds are inclusive). Such a list is not asked. Never used on the rules'
 * own queries: a stateless run asks those, and the service's answer (an error, perhaps) is the one to give.
 */
export function emptyRange(q: CanonicalQuery): boolean {
  for (const f of DATE_FIELDS) {
    const after = time(q[`${f}_after`]);
    const before = time(q[`${f}_before`]);
    if (after !== undefined && before !== undefined && after > before) return true;
  }
  return false;
}

/** The instant a query's `last_updated_time_after` bound names (epoch ms), if it has one. */
export function updatedAfter(q: CanonicalQuery): number | undefined {
  return time(q.last_updated_time_after);
}
