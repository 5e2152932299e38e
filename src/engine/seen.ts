/**
 * What a plan saw of each instance it plans a change for, so that apply can tell "changed after the plan saw it"
 * from "changed a moment before the plan" (fresh changes must not be skipped as stale).
 *
 * Most plans never read the full record of an instance (a filtered list and form-field pages decide it), so they
 * do not know its `last_updated_time`. Before any of its data is read, the plan lists, per rule that may change
 * something, the instances of its own selection updated since `now - margin` (one cursor list each), and reads
 * those few records:
 *
 * - an instance on that list: its `last_updated_time` as read then, before the plan read anything else of it, is
 *   the baseline (a change after the plan saw it shows as a different value; one between this read and the plan's
 *   own reads only makes apply refuse, the safe side);
 * - any other instance was last updated before `now - margin` when the plan looked (or entered the selection only
 *   after that list, by an update after it), so the plan records `last_updated_before` = that instant; a
 *   `last_updated_time` at or after it at apply time is a change since (for the latter, a refusal on the safe side).
 *
 * The margin covers the difference between our clock and the service's (DEFAULT_CLOCK_SKEW_MS, as apply assumes).
 */
import type { ApiClient } from "../api/index.js";
import type { PlannedChange } from "../plan/types.js";

export interface SeenInstances {
  /** instances updated since `before`: their last_updated_time as read before the plan's own reads */
  recent: Map<number, string>;
  /** every instance on the list, read or not */
  listed: Set<number>;
  /** every other instance of these workflows was last updated before this instant (ISO) */
  before: string;
}

/** A rule's selection: its workflow and the list query of its `select`. */
export interface Selection {
  processId: number;
  query: Record<string, string | number | boolean | Array<string | number>>;
}

/**
 * One list per distinct selection (its instances updated since `since`, 500 a page) and one read per listed
 * instance. With `values` (a rule that may change them reads fields) the read carries the field values
 * (`inject_values`): the same one request, and with state it answers the fields of these changed instances too, so
 * they are not read twice (src/state/values.ts).
 */
export async function seeInstances(
  client: ApiClient,
  selections: readonly Selection[],
  since: Date,
  values = false,
): Promise<SeenInstances> {
  const listed = new Set<number>();
  const distinct = new Map<string, Selection>();
  for (const s of selections) {
    const own = s.query.last_updated_time_after;
    // both bounds hold: the later one
    const after = typeof own === "string" && Date.parse(own) > since.getTime() ? own : since.toISOString();
    const query = { ...s.query, last_updated_time_after: after, page_size: 500 };
    distinct.set(`${s.processId}?${JSON.stringify(Object.entries(query).sort())}`, { processId: s.processId, query });
  }
  await Promise.all(
    [...distinct.values()].map(async (s) => {
      for await (const item of client.instances(s.processId, s.query)) listed.add(item.id);
    }),
  );
  const recent = new Map<number, string>();
  await Promise.all(
    [...listed].map(async (id) => {
      try {
        const record = await client.getInstance(id, values ? { injectValues: true } : {});
        if (record.last_updated_time) recent.set(id, record.last_updated_time);
      } catch {
        // unread: the change planned on it (if any) carries no baseline and apply refuses it when it changed
      }
    }),
  );
  return { recent, listed, before: since.toISOString() };
}

/**
 * The change with what the plan saw of its instance: a record read by the planner wins; then the early read; then
 * the bound. An instance on the early list whose read failed gets neither (apply judges it changed when listed).
 */
export function withSeen(change: PlannedChange, seen: SeenInstances | undefined): PlannedChange {
  if (!seen || change.precondition.last_updated_time !== undefined) return change;
  const early = seen.recent.get(change.instance_id);
  if (early !== undefined) return { ...change, precondition: { ...change.precondition, last_updated_time: early } };
  // listed but unread (the read failed): no bound may be claimed for it
  if (seen.listed.has(change.instance_id)) return change;
  return { ...change, precondition: { ...change.precondition, last_updated_before: seen.before } };
}
