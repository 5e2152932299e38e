/**
 * The query planner for a whole rule set: from the rules (their workflow, resolved `select` and needs) to the list
 * requests one run makes, counted in requests (docs/design.md, "Performance model"; docs/performance.md). Pure: no I/O.
 *
 * - Identical selections (same workflow, same resolved query) are listed once and shared by every rule using them.
 * - A selection that is another listed selection plus filters the engine can reproduce exactly is filtered
 *   client-side instead of listed, when what the filters need is known anyway:
 *   `status` from the list elements (always known); `priority`, `active_step_id` and a single `tags` value from the
 *   full records, only when some rule reads the records of the larger selection anyway. Other filters (`name`,
 *   `query`, several `tags`, date ranges, …) are always asked of the service: their exact semantics are the
 *   service's (several tags: any or all?), so they are not reproduced here.
 * - Steps a rule acts on, whose activity its selection does not guarantee, are learnt from the same selection
 *   filtered by `active_step_id` (a probe): itself a selection, shared and filtered like any other.
 * - A report that needs the record only for `priority` may instead list the selection filtered by `priority=V` and
 *   `priority=H` (Regular = the rest); the choice is made at run time from the selection's count
 *   ({@link choosePriority}).
 */
import type { FieldRef } from "../rules/types.js";
import { fieldKey } from "../model/field-values.js";
import { plural } from "../text/plural.js";
import type { ListQuery } from "./select.js";

/** The most elements one list page (4.2) or form-field page (4.6) carries. */
export const PAGE = 500;

/** A list is one request even when empty. */
export const pagesFor = (n: number): number => Math.max(1, Math.ceil(n / PAGE));

/** The values the service accepts for the `priority` filter; Regular is "none of them". */
export const PRIORITIES = ["V", "H"] as const;

export interface RuleQueryInput {
  rule: string;
  processId: number;
  query: ListQuery;
  /** the rule reads the full record of each selected instance */
  record: boolean;
  fields: FieldRef[];
  /** steps whose activity is learnt from a filtered list (only for rules that do not read the record) */
  probeSteps: number[];
  /** the record is needed only for `priority` (a report): filtered lists may answer it instead */
  priorityOnly: boolean;
}

/** A filter the engine applies to list elements or records exactly as the service would. */
export type ClientFilter =
  | { key: "status"; values: string[] }
  | { key: "priority"; value: string }
  | { key: "active_step_id"; step: number }
  | { key: "tags"; tag: string };

export type SelectionSource =
  { kind: "list" } | { kind: "filter"; parent: string; filters: ClientFilter[]; records: boolean };

export interface Selection {
  id: string;
  processId: number;
  query: ListQuery;
  source: SelectionSource;
  /** rules (and probes, as `rule (step N active)`) that use it */
  users: string[];
  /** why it is listed or filtered, in words */
  why: string;
}

export interface RuleQueries {
  selection: string;
  probes: Array<{ step: number; selection: string }>;
  /** the priority lists that may answer the rule instead of record reads, by priority value */
  priorityLists?: Record<(typeof PRIORITIES)[number], string>;
}

export interface QueryPlan {
  /** in the order they are first needed */
  selections: Map<string, Selection>;
  rules: Map<string, RuleQueries>;
  /** selections whose records some rule reads (so record filters on them cost nothing) */
  recordsRead: Set<string>;
}

/** Canonical text of a query: the same question however it was written (key order, order of status values). */
export function selectionId(processId: number, query: ListQuery): string {
  const entries = Object.entries(query)
    .map(([k, v]): [string, unknown] => [k, k === "status" && Array.isArray(v) ? [...v].map(String).sort() : v])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([processId, entries]);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function asList(v: unknown): string[] {
  return (Array.isArray(v) ? v : [v]).map(String);
}

/**
 * The filters that turn `parent` into `child`, when `child` is exactly `parent` narrowed by filters the engine can
 * reproduce; undefined otherwise.
 */
export function narrowing(parent: ListQuery, child: ListQuery): ClientFilter[] | undefined {
  for (const [k, v] of Object.entries(parent)) {
    if (!(k in child)) return undefined;
    if (k === "status") {
      const allowed = new Set(asList(v));
      if (!asList(child[k]).every((s) => allowed.has(s))) return undefined;
    } else if (!same(v, child[k])) return undefined;
  }
  const filters: ClientFilter[] = [];
  for (const [k, v] of Object.entries(child)) {
    if (k in parent && k !== "status") continue;
    if (k === "status") {
      const values = asList(v);
      if (!(k in parent) || asList(parent[k]).length !== values.length) filters.push({ key: "status", values });
    } else if (k === "priority" && (v === "H" || v === "V")) filters.push({ key: "priority", value: v });
    else if (k === "active_step_id" && /^\d+$/.test(String(v)))
      filters.push({ key: "active_step_id", step: Number(v) });
    else if (k === "tags" && asList(v).length === 1) filters.push({ key: "tags", tag: asList(v)[0] ?? "" });
    else return undefined;
  }
  return filters.length > 0 ? filters : undefined;
}

const needsRecords = (filters: ClientFilter[]): boolean => filters.some((f) => f.key !== "status");

function describeFilters(filters: ClientFilter[]): string {
  return filters
    .map((f) =>
      f.key === "status"
        ? `status in (${f.values.join(", ")})`
        : f.key === "priority"
          ? `priority=${f.value}`
          : f.key === "tags"
            ? `tags=${f.tag}`
            : `active_step_id=${f.step}`,
    )
    .join(" and ");
}

export function planQueries(inputs: readonly RuleQueryInput[]): QueryPlan {
  const wanted = new Map<string, { processId: number; query: ListQuery; users: string[] }>();
  const want = (processId: number, query: ListQuery, user: string): string => {
    const id = selectionId(processId, query);
    const w = wanted.get(id);
    if (w) w.users.push(user);
    else wanted.set(id, { processId, query, users: [user] });
    return id;
  };

  const rules = new Map<string, RuleQueries>();
  const recordsRead = new Set<string>();
  for (const r of inputs) {
    const selection = want(r.processId, r.query, r.rule);
    if (r.record && !r.priorityOnly) recordsRead.add(selection);
    const probes = r.record
      ? []
      : r.probeSteps.map((step) => ({
          step,
          selection: want(r.processId, { ...r.query, active_step_id: step }, `${r.rule} (step ${step} active)`),
        }));
    const q: RuleQueries = { selection, probes };
    if (r.priorityOnly && !("priority" in r.query)) {
      const [v, h] = PRIORITIES.map((p) => selectionId(r.processId, { ...r.query, priority: p }));
      if (v !== undefined && h !== undefined) q.priorityLists = { V: v, H: h };
    }
    rules.set(r.rule, q);
  }

  // a selection is listed unless a listed one narrows to it with filters whose inputs are known anyway; the widest
  // selections are decided first so that a narrower one can lean on them
  const selections = new Map<string, Selection>();
  const statuses = (q: ListQuery): number => ("status" in q ? asList(q.status).length : Number.MAX_SAFE_INTEGER);
  const byWidth = [...wanted.entries()].sort(
    ([, a], [, b]) =>
      Object.keys(a.query).length - Object.keys(b.query).length || statuses(b.query) - statuses(a.query),
  );
  const decided = new Map<string, Selection>();
  for (const [id, w] of byWidth) {
    let best: Selection | undefined;
    let filters: ClientFilter[] | undefined;
    let refused: string | undefined;
    for (const parent of decided.values()) {
      if (parent.processId !== w.processId) continue;
      const f = narrowing(parent.query, w.query);
      if (!f) continue;
      if (needsRecords(f) && !recordsRead.has(parent.id)) {
        refused ??= `listed: ${describeFilters(f)} needs the records of ${parent.users[0] ?? parent.id}'s selection, which no rule reads`;
        continue;
      }
      // the narrowest parent leaves the fewest elements to filter
      const keys = (q: ListQuery): number => Object.keys(q).length;
      if (
        !best ||
        keys(parent.query) - keys(best.query) > 0 ||
        (keys(parent.query) === keys(best.query) && statuses(parent.query) < statuses(best.query))
      ) {
        best = parent;
        filters = f;
      }
    }
    const sel: Selection =
      best && filters
        ? {
            id,
            processId: w.processId,
            query: w.query,
            source: { kind: "filter", parent: best.id, filters, records: needsRecords(filters) },
            users: w.users,
            why:
              `filtered client-side from the selection of ${best.users[0] ?? best.id} by ${describeFilters(filters)} ` +
              `(${needsRecords(filters) ? "from the records it reads anyway" : "from its list elements"}): no list request`,
          }
        : {
            id,
            processId: w.processId,
            query: w.query,
            source: { kind: "list" },
            users: w.users,
            why:
              refused ??
              `listed${w.users.length > 1 ? ` once for ${w.users.length} users` : ""}: no other selection of the rule set narrows to it`,
          };
    decided.set(id, sel);
  }
  // back in the order of first use
  for (const id of wanted.keys()) {
    const s = decided.get(id);
    if (s) selections.set(id, s);
  }
  return { selections, rules, recordsRead };
}

/** The listed selection a selection is listed or filtered from. */
export function rootOf(plan: QueryPlan, id: string): string {
  let s = plan.selections.get(id);
  const seen = new Set<string>();
  while (s && s.source.kind === "filter" && !seen.has(s.id)) {
    seen.add(s.id);
    s = plan.selections.get(s.source.parent);
  }
  return s?.id ?? id;
}

/** Adds the priority lists of a rule to the plan (decided at run time), sharing any that already exist. */
export function priorityListSelections(plan: QueryPlan, rule: string, base: Selection): Selection[] {
  const out: Selection[] = [];
  for (const p of PRIORITIES) {
    const query = { ...base.query, priority: p };
    const id = selectionId(base.processId, query);
    let sel = plan.selections.get(id);
    if (!sel) {
      sel = {
        id,
        processId: base.processId,
        query,
        source: { kind: "list" },
        users: [],
        why: `listed for the priority of ${rule}`,
      };
      plan.selections.set(id, sel);
    }
    sel.users.push(`${rule} (priority ${p})`);
    out.push(sel);
  }
  return out;
}

export interface PriorityChoice {
  lists: boolean;
  why: string;
}

/**
 * Record reads against priority lists, in requests: reading costs one request per selected instance not read by
 * another rule; the lists cost at most the selection's pages each (estimated from its count), none for a list
 * already planned.
 */
export function choosePriority(selected: number, unreadRecords: number, listsToAdd: number): PriorityChoice {
  const listCost = listsToAdd * pagesFor(selected);
  if (unreadRecords === 0)
    return { lists: false, why: "priority from records read anyway for another rule: no request" };
  if (listCost < unreadRecords) {
    return {
      lists: true,
      why:
        `priority from ${plural(listsToAdd, "filtered list")} (priority=V, priority=H; Regular = the rest): ` +
        `at most ${plural(listCost, "page")} instead of ${plural(unreadRecords, "record read")}`,
    };
  }
  return {
    lists: false,
    why: `priority from ${plural(unreadRecords, "record read")}: fewer than the ${plural(listCost, "page")} of the priority lists`,
  };
}

export interface FieldBatchPlan {
  processId: number;
  field: FieldRef;
  ids: number[];
  /** requests: one form-field page per 500 ids */
  pages: number;
}

/** Field values still unknown, per field of a workflow, for all rules together: one request per 500 ids. */
export function planFieldBatches(
  needs: ReadonlyArray<{ processId: number; fields: readonly FieldRef[]; ids: Iterable<number> }>,
  known: (key: string, id: number) => boolean,
): FieldBatchPlan[] {
  const byField = new Map<string, { processId: number; field: FieldRef; ids: Set<number> }>();
  for (const n of needs) {
    const ids = [...n.ids];
    for (const f of n.fields) {
      const key = fieldKey(f.step, f.action);
      const at = `${n.processId}:${key}`;
      let e = byField.get(at);
      if (!e) {
        e = { processId: n.processId, field: f, ids: new Set() };
        byField.set(at, e);
      }
      for (const id of ids) if (!known(key, id)) e.ids.add(id);
    }
  }
  return [...byField.values()]
    .filter((e) => e.ids.size > 0)
    .map((e) => ({ processId: e.processId, field: e.field, ids: [...e.ids], pages: Math.ceil(e.ids.size / PAGE) }));
}
