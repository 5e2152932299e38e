/**
 * The reasoning that lets a forecast (./forecast.ts) answer a time-relative selection at every point from two
 * listings (docs/forecast.md). The selection's relative bounds only widen or narrow it as time goes on, so
 * between the first point asked and the horizon it always holds the narrowest question's instances (N: each `_before`
 * bound at the start, each `_after` bound at the horizon) and never more than the widest's (W: the other way round).
 * An instance of W that is not in N is in the selection at an instant exactly when its time of that field lies
 * within the bounds at that instant; its record (read once, or already read by a rule) tells that time. When the
 * bounds all move one way, the selection as the first point asks it and the slice each bound sweeps over the horizon
 * are enough (`sweeps`): the second listing is of the instances that may enter or leave, not the whole selection.
 *
 * Which bounds are relative is read from the rules themselves: a value the client sees is relative when one relative
 * `select` value of the rule set resolves to it at the client's instant, and no fixed one does.
 */
import type { InstanceListItem, InstanceRecord } from "../api/schemas.js";
import { DATE_TIME_PARAMS, resolveDateTime } from "../rules/datetime.js";
import type { CompiledRule } from "../rules/types.js";
import { isDateParam, type CanonicalQuery, type QueryValue } from "../state/bounds.js";

const DATE_TIME = new Set(DATE_TIME_PARAMS);
const DAY = 86_400_000;

/** Per date parameter, the relative values the rules give it and the fixed ones (resolved). */
export type BoundIndex = Map<string, { relative: string[]; fixed: Set<string> }>;

export function boundIndex(rules: readonly CompiledRule[], at: Date): BoundIndex {
  const index: BoundIndex = new Map();
  for (const rule of rules) {
    for (const [key, value] of Object.entries(rule.select)) {
      if (!DATE_TIME.has(key) || typeof value !== "string") continue;
      let entry = index.get(key);
      if (!entry) {
        entry = { relative: [], fixed: new Set() };
        index.set(key, entry);
      }
      let a: string, b: string;
      try {
        a = resolveDateTime(value, at);
        b = resolveDateTime(value, new Date(at.getTime() + 400 * DAY));
      } catch {
        continue; // not a date: the service answers the question as asked
      }
      if (a === b) entry.fixed.add(a);
      else if (!entry.relative.includes(value)) entry.relative.push(value);
    }
  }
  return index;
}

/** A bound that moves with the instant: where it is at `t` (epoch ms). */
export type Mover = (t: number) => number;

/**
 * Whether a bound's `value`, seen at `nowMs`, moves with the instant (and how), is fixed, or cannot be told (a fixed
 * and a relative value of the rules resolve to it, or relative ones that part later).
 */
export function boundKind(
  index: BoundIndex,
  key: string,
  value: QueryValue,
  nowMs: number,
  horizon: readonly number[],
): { spec: string; at: Mover } | "fixed" | "unknown" {
  const entry = index.get(key);
  if (typeof value !== "string") return "unknown";
  const matching = (entry?.relative ?? []).filter((s) => resolveDateTime(s, new Date(nowMs)) === value);
  const spec = matching[0];
  if (spec === undefined) return "fixed";
  if (entry?.fixed.has(value)) return "unknown";
  for (const other of matching.slice(1))
    for (const t of horizon)
      if (resolveDateTime(other, new Date(t)) !== resolveDateTime(spec, new Date(t))) return "unknown";
  return { spec, at: (t) => Date.parse(resolveDateTime(spec, new Date(t))) };
}

export type TimeField =
  | "started_time"
  | "last_updated_time"
  | "deadline"
  | "aborted_time"
  | "completed_time"
  | "ended_time"
  | "step_deadline";

export interface MovedBound {
  key: string;
  /** the record's field the bound is on */
  field: TimeField;
  side: "after" | "before";
  at: Mover;
  /** false: a fixed bound on a field another bound of the query moves on (one step deadline must meet both) */
  moves: boolean;
}

export interface Horizon {
  /** a key that is the same for this selection at every instant */
  key: string;
  moved: MovedBound[];
}

/** Whether a query's parameters mean the same at every instant and shape the set, not its pages. */
export function answerable(q: CanonicalQuery): boolean {
  if (q.ordering !== undefined || q.cursor !== undefined) return false;
  return q.page_size === undefined || Number(q.page_size) === 500;
}

/**
 * The moving bounds of a query asked at `nowMs`, with a key naming the selection whatever the instant; undefined when
 * the query has no relative bound or one this reasoning cannot answer (then the question is asked as it is).
 */
export function horizonOf(
  index: BoundIndex,
  processId: number,
  q: CanonicalQuery,
  nowMs: number,
  horizon: readonly number[],
): Horizon | undefined {
  if (!answerable(q)) return undefined;
  const bounds: MovedBound[] = [];
  const named: Record<string, QueryValue> = {};
  for (const [key, value] of Object.entries(q)) {
    named[key] = value;
    if (!isDateParam(key)) continue;
    const kind = boundKind(index, key, value, nowMs, horizon);
    if (kind === "unknown") return undefined;
    const field = key.replace(/_(after|before)$/, "") as TimeField;
    const side = key.endsWith("_after") ? "after" : "before";
    if (kind === "fixed") {
      const ms = typeof value === "string" ? Date.parse(value) : NaN;
      if (Number.isNaN(ms)) return undefined;
      bounds.push({ key, field, side, at: () => ms, moves: false });
      continue;
    }
    bounds.push({ key, field, side, at: kind.at, moves: true });
    named[key] = `relative ${kind.spec}`;
  }
  const moving = new Set(bounds.filter((b) => b.moves).map((b) => b.field));
  if (moving.size === 0) return undefined;
  return { key: `${processId}:${JSON.stringify(named)}`, moved: bounds.filter((b) => moving.has(b.field)) };
}

const iso = (t: number): string => new Date(t).toISOString();

/** The widest (W) and the narrowest (N) question of a selection between `from` and `to`. */
export function extremes(
  q: CanonicalQuery,
  moved: readonly MovedBound[],
  from: number,
  to: number,
): { widest: CanonicalQuery; narrowest: CanonicalQuery } {
  const widest: CanonicalQuery = { ...q };
  const narrowest: CanonicalQuery = { ...q };
  for (const m of moved) {
    if (!m.moves) continue;
    widest[m.key] = iso(m.at(m.side === "before" ? to : from));
    narrowest[m.key] = iso(m.at(m.side === "before" ? from : to));
  }
  return { widest, narrowest };
}

/**
 * A time as the service compares it: epoch ms, and whether digits beyond the millisecond make it later than that ms
 * (a service may send microseconds).
 */
export interface Time {
  ms: number;
  finer: boolean;
}

function timeOf(v: unknown): Time | undefined {
  if (typeof v !== "string") return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) return undefined;
  const digits = /T\d{2}:\d{2}:\d{2}\.(\d+)/.exec(v)?.[1] ?? "";
  return { ms, finer: /[1-9]/.test(digits.slice(3)) };
}

/**
 * A record's times of a field as the list's filter judges them (docs/service.md): ended_time is the aborted or else
 * the completed time, step_deadline any active step's deadline (elements `{step_id, deadline}`).
 */
export function recordTimes(record: InstanceRecord, field: TimeField): Time[] {
  const one = (v: unknown): Time[] => {
    const t = timeOf(v);
    return t ? [t] : [];
  };
  if (field === "ended_time") return one(record.aborted_time ?? record.completed_time);
  if (field === "step_deadline") {
    const active = new Set(record.active_step_ids ?? []);
    return (record.step_deadlines ?? []).flatMap((d) => {
      if (typeof d !== "object" || d === null) return [];
      const { step_id: step, deadline } = d as { step_id?: unknown; deadline?: unknown };
      return typeof step === "number" && active.has(step) ? one(deadline) : [];
    });
  }
  return one(record[field]);
}

function meets(x: Time, m: MovedBound, t: number): boolean {
  const bound = m.at(t);
  return m.side === "after" ? x.ms >= bound : x.ms < bound || (x.ms === bound && !x.finer);
}

/** Whether, per field, one of the times meets every bound on that field at `t` (bounds are inclusive, as the list's). */
export function within(times: ReadonlyMap<string, Time[]>, moved: readonly MovedBound[], t: number): boolean {
  const fields = new Set(moved.map((m) => m.field));
  for (const f of fields) {
    const on = moved.filter((m) => m.field === f);
    if (!(times.get(f) ?? []).some((x) => on.every((m) => meets(x, m, t)))) return false;
  }
  return true;
}

const timeOfParam = (v: QueryValue | undefined): number | undefined => {
  if (typeof v !== "string") return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
};

/**
 * When every moving bound moves one way, the selection is asked as it is at the start (`base`: the narrowest when
 * `_before` bounds move, the widest when `_after` ones do) plus, per moving bound, the slice of the widest between
 * where that bound starts and where it ends: the instances that may enter (or leave) the selection, usually one page,
 * instead of a second listing of the whole selection. Undefined when bounds move both ways.
 */
export function sweeps(
  moved: readonly MovedBound[],
  widest: CanonicalQuery,
  from: number,
  to: number,
): { base: "narrowest" | "widest"; slices: CanonicalQuery[] } | undefined {
  const moving = moved.filter((m) => m.moves);
  if (moving.every((m) => m.side === "before"))
    return {
      base: "narrowest",
      slices: moving.map((m) => {
        const after = `${m.field}_after`;
        return { ...widest, [after]: iso(Math.max(timeOfParam(widest[after]) ?? -Infinity, m.at(from))) };
      }),
    };
  if (moving.every((m) => m.side === "after"))
    return {
      base: "widest",
      slices: moving.map((m) => {
        const before = `${m.field}_before`;
        return { ...widest, [before]: iso(Math.min(timeOfParam(widest[before]) ?? Infinity, m.at(to))) };
      }),
    };
  return undefined;
}

/** A time-relative selection over the horizon: its widest listing, which of it is in the narrowest, the rest's times. */
export interface HorizonEntry {
  moved: MovedBound[];
  widest: InstanceListItem[];
  narrowest: Set<number>;
  keys: { widest: string; narrowest: string };
  /** in the widest, not in the narrowest: in or out by their times */
  between: number[];
  times?: Map<number, Map<string, Time[]>>;
  /** answered by listings at each point instead (reading the times would cost more) */
  fallback: boolean;
}

/** The entry of a selection listed at its widest and narrowest. */
export function fromExtremes(
  moved: MovedBound[],
  keys: HorizonEntry["keys"],
  wide: InstanceListItem[],
  narrow: InstanceListItem[],
): HorizonEntry {
  const inNarrow = new Set(narrow.map((i) => i.id));
  const wideIds = new Set(wide.map((i) => i.id));
  return {
    moved,
    widest: wide,
    narrowest: inNarrow,
    keys,
    between: wide.filter((i) => !inNarrow.has(i.id)).map((i) => i.id),
    // an instance listed in the narrowest but not the widest (people changed it in between) is asked as usual
    fallback: !narrow.every((i) => wideIds.has(i.id)),
  };
}

/** The entry of a selection listed as at the start (`base`) with the slices its bounds sweep (`sweeps`). */
export function fromSweeps(
  moved: MovedBound[],
  keys: HorizonEntry["keys"],
  side: "narrowest" | "widest",
  base: InstanceListItem[],
  slices: InstanceListItem[],
): HorizonEntry {
  const baseIds = new Set(base.map((i) => i.id));
  const swept = new Map(slices.map((i) => [i.id, i]));
  if (side === "narrowest") {
    const entering = [...swept.values()].filter((i) => !baseIds.has(i.id));
    return {
      moved,
      widest: [...base, ...entering],
      narrowest: baseIds,
      keys,
      between: entering.map((i) => i.id),
      fallback: false,
    };
  }
  const leaving = base.filter((i) => swept.has(i.id)).map((i) => i.id);
  const out = new Set(leaving);
  return {
    moved,
    widest: base,
    narrowest: new Set([...baseIds].filter((id) => !out.has(id))),
    // the narrowest question is not the stable part here (an instance on its bound is both): judged by times
    keys: { widest: keys.widest, narrowest: "" },
    between: leaving,
    // an instance of a slice that the selection does not hold (people changed it in between) is asked as usual
    fallback: [...swept.keys()].some((id) => !baseIds.has(id)),
  };
}
