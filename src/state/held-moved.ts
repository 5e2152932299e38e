/**
 * A partial plan's answer to a selection whose bounds relative to `now` moved since the previous complete state
 * (docs/operating.md, "A partial plan"): `deadline_before: now` or `last_updated_time_before: -P90D` asked at this
 * run's `now` is another question than the one that state listed, but it can often be answered from a listing that
 * state holds, without the service.
 *
 * Why it is sound: every bound a listing was asked with is an absolute instant, and an instance that did not change
 * since that state looked (this run's changes listing does not name it) has the attributes it had then (docs/service.md,
 * "State between runs"), so whether it passes a fixed question does not change. A held listing whose question
 * contains this one (the same parameters, its statuses a superset, each date range as wide or wider) therefore holds
 * every unchanged instance of this selection; each is kept when its list element and its held record pass this
 * question's bounds. The instances that changed are not known (they may have entered or left): the caller leaves them
 * out, as for any older listing. Nothing is guessed: an element whose place cannot be decided (its record is not held,
 * its time lies within a millisecond of a bound, a bound is on a time a record does not carry as filtered) makes the
 * listing unusable, and the rule stays cut with the reason.
 */
import { isDateParam, sliceable, type CanonicalQuery, type QueryValue } from "./bounds.js";
import type { ListingRef, StateIndex } from "./reader.js";
import { parsedOrNothing } from "./run.js";
import { itemLine } from "./schema.js";

/**
 * The times a record carries as the list filters read them. `step_deadline` (which steps' deadlines count) and
 * `ended_time` are the service's to say: not decided here.
 */
const ON_RECORD = new Set(["started_time", "last_updated_time", "deadline", "aborted_time", "completed_time"]);

/** The service may keep more than milliseconds: a time this close to a bound is not decided (docs/service.md). */
const EDGE_MS = 1;

interface DateCheck {
  key: string;
  field: string;
  bound: number;
  after: boolean;
}

/** The top-level keys of the held records of instances, by id (those with none held left out). */
export type HeldRecords = (ids: readonly number[]) => Promise<ReadonlyMap<number, Readonly<Record<string, unknown>>>>;

/**
 * A parameter the held question does not have, decided from the record as the engine filters a wider listing
 * (src/engine/query-plan.ts, `narrowing`): a priority, an active step, a single tag.
 */
interface KeyCheck {
  key: "priority" | "active_step_id" | "tags";
  value: string;
}

/** What turns a held question into this one: what to check per instance, or why it does not contain it. */
export type Narrowing = { statuses: Set<string> | undefined; dates: DateCheck[]; keys: KeyCheck[] } | { why: string };
type How = Exclude<Narrowing, { why: string }>;

const list = (v: QueryValue | undefined): string[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String);
const time = (v: QueryValue | undefined): number => (typeof v === "string" ? Date.parse(v) : Number.NaN);

/** How `held` (a question a listing answered) contains `q`, decided from list elements and records; or why not. */
export function containing(held: CanonicalQuery, q: CanonicalQuery): Narrowing {
  if (!sliceable(held) || !sliceable(q)) return { why: "an ordering, a page size or a bound that drifts" };
  for (const [k, v] of Object.entries(held)) {
    const w = q[k];
    if (w === undefined) return { why: `${k} is not asked` };
    if (k === "status") {
      const allowed = new Set(list(v));
      if (!list(w).every((s) => allowed.has(s))) return { why: "other statuses" };
    } else if (isDateParam(k)) {
      const [a, b] = [time(v), time(w)];
      if (Number.isNaN(a) || Number.isNaN(b)) return { why: `${k} is not a time` };
      if (k.endsWith("_after") ? a > b : a < b) return { why: `${k} is narrower` };
    } else if (JSON.stringify(v) !== JSON.stringify(w)) return { why: `another ${k}` };
  }
  let statuses: Set<string> | undefined;
  const dates: DateCheck[] = [];
  const keys: KeyCheck[] = [];
  for (const [k, w] of Object.entries(q)) {
    if (k === "status") {
      if (held.status === undefined || list(held.status).length !== list(w).length) statuses = new Set(list(w));
    } else if (isDateParam(k)) {
      if (held[k] === w) continue; // the same bound: every element of the held listing passes it
      const field = k.replace(/_(after|before)$/, "");
      if (!ON_RECORD.has(field)) return { why: `${k} is not decided from a record` };
      const bound = time(w);
      if (Number.isNaN(bound)) return { why: `${k} is not a time` };
      dates.push({ key: k, field, bound, after: k.endsWith("_after") });
    } else if (held[k] === undefined) {
      const check = keyCheck(k, w);
      if (!check) return { why: `${k} is not asked` };
      keys.push(check);
    }
  }
  return { statuses, dates, keys };
}

/** A parameter the record decides, as the engine's narrowing takes it; undefined for any other. */
function keyCheck(k: string, w: QueryValue): KeyCheck | undefined {
  const values = list(w);
  if (k === "priority" && (w === "H" || w === "V")) return { key: "priority", value: w };
  if (k === "active_step_id" && /^\d+$/.test(String(w))) return { key: "active_step_id", value: String(w) };
  if (k === "tags" && values.length === 1) return { key: "tags", value: values[0] ?? "" };
  return undefined;
}

/** Whether a record passes a parameter check, as the engine's filters read a record (src/engine/run-queries.ts). */
function passesKey(r: Readonly<Record<string, unknown>>, c: KeyCheck): boolean {
  if (c.key === "priority") return r.priority === c.value;
  const held = c.key === "tags" ? r.tags : r.active_step_ids;
  return Array.isArray(held) && held.map(String).includes(c.value);
}

/** Of a held listing, the unchanged elements this question keeps; or why one of them cannot be placed. */
export async function placed(
  index: StateIndex,
  ref: ListingRef,
  how: How,
  changed: ReadonlySet<number>,
  records: HeldRecords,
): Promise<{ keep: Set<number> } | { why: string }> {
  const keep = new Set<number>();
  for (const page of ref.pages) {
    const ids: number[] = [];
    for (const text of await index.lines(page.lines)) {
      const item = itemLine(parsedOrNothing(text));
      if (!item) return { why: "a listing no longer verifies" };
      const { id, status } = item.v;
      if (!changed.has(id) && (!how.statuses || how.statuses.has(status))) ids.push(id);
    }
    // a page's records read together
    const held = how.dates.length > 0 || how.keys.length > 0 ? await records(ids) : undefined;
    for (const id of ids) {
      const r = held?.get(id);
      if (held && !r) return { why: `the record of instance ${id} is not held` };
      const out = r ? how.keys.every((c) => passesKey(r, c)) && place(id, r, how.dates) : true;
      if (typeof out === "string") return { why: out };
      if (out) keep.add(id);
    }
  }
  return { keep };
}

/** Whether a record's times pass every date bound; why not decided when one cannot be told. */
function place(id: number, r: Readonly<Record<string, unknown>>, dates: readonly DateCheck[]): boolean | string {
  for (const d of dates) {
    const raw = r[d.field];
    // no value: never within a bound (docs/service.md)
    if (raw === null || raw === undefined) return false;
    const t = typeof raw === "string" ? Date.parse(raw) : Number.NaN;
    if (Number.isNaN(t)) return `instance ${id}'s ${d.field} is not a time`;
    if (Math.abs(t - d.bound) <= EDGE_MS) return `instance ${id}'s ${d.field} is at ${d.key}`;
    if (d.after ? t < d.bound : t > d.bound) return false;
  }
  return true;
}

/** The size of a held listing, to try the narrowest first. */
function sizeOf(ref: ListingRef): number {
  return ref.pages.reduce((n, p) => n + p.lines.length, 0);
}

/**
 * A question the previous state did not list as asked, answered from a listing of that state (asked as of its look
 * of the workflow, `lookedAt`) whose question contains it, narrowest first; or why none answers it. `count` is the
 * selection's at this run's `now` when nothing of the workflow changed and the listing was read whole.
 */
export async function fromContaining(
  index: StateIndex,
  processId: number,
  q: CanonicalQuery,
  changed: ReadonlySet<number>,
  lookedAt: string | undefined,
  records: HeldRecords,
): Promise<{ ref: ListingRef; keep: Set<number>; count: number | null } | string> {
  const candidates = [...index.listings.values()]
    .filter((r) => r.process_id === processId && r.run_at === lookedAt && (r.complete || r.pages.length > 0))
    .sort((a, b) => sizeOf(a) - sizeOf(b));
  let why = "no listing it holds contains it";
  for (const ref of candidates) {
    const how = containing(ref.query, q);
    if ("why" in how) continue;
    const got = await placed(index, ref, how, changed, records);
    if ("why" in got) {
      why = got.why;
      continue;
    }
    return { ref, keep: got.keep, count: changed.size === 0 && ref.complete ? got.keep.size : null };
  }
  return `a selection of workflow ${processId} is asked at this run's now with bounds that moved since the previous state, which cannot place it (${why})`;
}
