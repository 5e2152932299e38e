/**
 * How much of each rule a partial plan covers (docs/operating.md, "A partial plan"), judged per rule from the
 * listings the held answers gave (src/state/held.ts): a rule is complete when its own selection was held whole (read
 * to its end, nothing of it left out), whatever else of its workflow the sync lacks; its `total` is the service's
 * count of its selection, or, for a selection filtered from a wider listing held whole, the count of that listing's
 * elements that pass the filters (as the engine filters them: src/engine/run-queries.ts).
 */
import type { InstanceListItem, InstanceListQuery, InstanceRecord } from "../api/index.js";
import { actionKind } from "../actions/index.js";
import { excludedTags, exclusionsOf, movingBounds } from "../engine/exclusions.js";
import { PRIORITIES, narrowing, type ClientFilter } from "../engine/query-plan.js";
import { priorityOnly } from "../engine/plan-fields.js";
import { passesFilters } from "../engine/run-queries.js";
import { selectQuery, stepsToProbe, type ListQuery } from "../engine/select.js";
import type { CompiledRule } from "../rules/types.js";
import { listingKey, recordOf, type HeldClient, type Served } from "../state/index.js";

const FLAGS = ["", "v", "t", "vt"];

/** A held record of the instance, read with any options (priority, tags and active steps are in each). */
async function anyRecord(client: HeldClient, id: number): Promise<InstanceRecord | undefined> {
  for (const f of FLAGS) {
    const held = client.heldRecord(id, f);
    const record = held ? await recordOf(held.index, held.ref) : undefined;
    if (record) return record;
  }
  return undefined;
}

/** Whether an element passes the filters; undefined when a filter needs a record that is not held. */
async function passes(
  client: HeldClient,
  item: InstanceListItem,
  filters: ClientFilter[],
): Promise<boolean | undefined> {
  if (filters.every((f) => f.key === "status")) return passesFilters(item, filters, undefined);
  const record = await anyRecord(client, item.id);
  return record ? passesFilters(item, filters, record) : undefined;
}

export interface RuleCover {
  /** its selection was held whole in every workflow */
  whole: boolean;
  /** the count of its selection (the service's, or derived as above); null when not known */
  total: number | null;
}

/** The listing a selection was answered from: its own, or a wider one it was filtered from, with the filters. */
function source(
  client: HeldClient,
  pid: number,
  query: ListQuery,
): { key: string; served: Served; filters: ClientFilter[] } | undefined {
  const key = listingKey(pid, query as InstanceListQuery);
  const own = client.served.get(key);
  if (own) return { key, served: own, filters: [] };
  for (const [k, s] of client.served) {
    const f = s.processId === pid && s.query.ordering === undefined ? narrowing(s.query, query) : undefined;
    if (f) return { key: k, served: s, filters: f };
  }
  return undefined;
}

export type Planned = ReadonlyArray<{ rule: CompiledRule; workflows: readonly number[] }>;

/** What the rules answered from one listing read of each of its instances: records, and which fields. */
export interface Reads {
  record: boolean;
  /** "step:action" */
  fields: Set<string>;
}

/** Per listing answered, what the rules whose selection it answers read of its instances (none: not named). */
export function readsByListing(client: HeldClient, rules: Planned, now: Date): Map<string, Reads> {
  const out = new Map<string, Reads>();
  for (const { rule, workflows } of rules) {
    const fields = rule.needs.fields.flatMap((alias) => {
      const f = rule.fields[alias];
      return f ? [`${f.step}:${f.action}`] : [];
    });
    const record = rule.needs.record || rule.needs.times === true;
    if (!record && fields.length === 0) continue;
    const query = selectQuery(rule.select, now);
    for (const pid of workflows) {
      const s = source(client, pid, query);
      if (!s) continue;
      let r = out.get(s.key);
      if (!r) out.set(s.key, (r = { record: false, fields: new Set() }));
      r.record ||= record;
      for (const f of fields) r.fields.add(f);
    }
  }
  return out;
}

/** The listings answered of rules that change instances (not in audit mode): where two may clash on an instance. */
export function changingKeys(client: HeldClient, rules: Planned, now: Date): Set<string> {
  const keys = new Set<string>();
  for (const { rule, workflows } of rules) {
    if (rule.mode === "audit" || !rule.actions.some((a) => actionKind(a.kind).mutating)) continue;
    const query = selectQuery(rule.select, now);
    for (const pid of workflows) {
      const s = source(client, pid, query);
      if (s) keys.add(s.key);
    }
  }
  return keys;
}

/** The rule's selection in one workflow, as its question is asked at `now`. */
async function cover(client: HeldClient, pid: number, query: ListQuery): Promise<RuleCover> {
  const key = listingKey(pid, query as InstanceListQuery);
  if (client.emptied.has(key)) return { whole: true, total: 0 };
  const { served, filters } = source(client, pid, query) ?? {};
  if (!served || !filters) return { whole: false, total: null };
  let inSelection = 0; // of the instances left out: in the selection, or not known to be out of it
  for (const item of served.dropped) if ((await passes(client, item, filters)) !== false) inSelection++;
  const whole = !served.part && inSelection === 0;
  if (filters.length === 0) return { whole, total: served.count };
  // filtered from a wider listing: the service's count of the selection when a listing of it is held, else the
  // count of the wider listing's elements that pass the filters, when it was held whole
  const counted = await client.countOf(pid, query as InstanceListQuery);
  if (counted !== null || served.part) return { whole, total: counted };
  const items = await client.elements(served);
  if (!items) return { whole, total: null };
  let total = 0;
  for (const item of items) {
    const p = await passes(client, item, filters);
    if (p === undefined) return { whole, total: null };
    if (p) total++;
  }
  return { whole, total };
}

/** How much of the rule's selection the partial plan covers, over its workflows. */
export async function ruleCover(
  client: HeldClient,
  rule: CompiledRule,
  workflows: readonly number[],
  now: Date,
): Promise<RuleCover> {
  const query = selectQuery(rule.select, now);
  let whole = workflows.length > 0;
  let total: number | null = 0;
  for (const pid of workflows) {
    const c = await cover(client, pid, query);
    whole &&= c.whole;
    total = total === null || c.total === null ? null : total + c.total;
  }
  return { whole, total };
}

/** The questions of a rule's selection, one per workflow: a listing of them held in part is a part of the rule. */
export function selectionKeys(rule: CompiledRule, workflows: readonly number[], now: Date): string[] {
  const query = selectQuery(rule.select, now) as InstanceListQuery;
  return workflows.map((pid) => listingKey(pid, query));
}

/**
 * The lists a rule reads beside its selection when it does not read records (src/engine/exclusions.ts,
 * src/engine/select.ts, src/engine/plan-live.ts): its excluded tags' instances, its steps' activity, and, for a report
 * that needs the record only for `priority`, the lists `priority=V` and `priority=H` of its selection, which answer it
 * instead of the records when fewer requests (and then the excluded tags too). Held in part, or with instances left
 * out (such a list may be another rule's own selection, left without instances whose data that rule reads), they
 * would answer wrongly (an excluded instance changed, an active step taken for inactive, a priority for Regular), so
 * such a rule is not planned.
 */
export function besideKeys(
  rule: CompiledRule,
  workflows: readonly number[],
  now: Date,
  optOutTag: string | undefined,
): string[] {
  const lists = priorityOnly(rule);
  if (rule.needs.record && !lists) return [];
  const query = selectQuery(rule.select, now);
  const keys: string[] = [];
  const tags = excludedTags(exclusionsOf(rule, optOutTag));
  const { tags: _selected, ...rest } = query;
  for (const key of movingBounds(rule.select)) delete rest[key];
  for (const pid of workflows) {
    if (tags.length > 0) keys.push(listingKey(pid, { ...rest, tags: [...tags] }));
    for (const step of stepsToProbe(rule)) keys.push(listingKey(pid, { ...query, active_step_id: step }));
    if (lists && !("priority" in query))
      for (const priority of PRIORITIES) keys.push(listingKey(pid, { ...query, priority }));
  }
  return keys;
}

/** Whether a list read beside a selection was answered other than whole: in part, or with instances left out. */
export function notWhole(served: Served | undefined): boolean {
  return served !== undefined && (served.part || served.dropped.length > 0);
}

/**
 * A listing of the previous state read to its end that lacks only the instances changed since (a steady run's): for
 * the unchanged ones it answers as the service does now, and a selection answered from that state lacks the same.
 */
export function changedOnly(s: Served): boolean {
  return s.changed !== undefined && s.ref.complete && s.dropped.length === 0;
}

/**
 * Whether each of the rule's selections was answered from the previous state (so lacks the instances changed since,
 * as its lists read beside it do) or answered empty by the live run; not when one came from this run's reads.
 */
export function selectionFromOlder(
  client: HeldClient,
  rule: CompiledRule,
  workflows: readonly number[],
  now: Date,
): boolean {
  const query = selectQuery(rule.select, now);
  return workflows.every((pid) => {
    if (client.emptied.has(listingKey(pid, query as InstanceListQuery))) return true;
    return source(client, pid, query)?.served.changed !== undefined;
  });
}
