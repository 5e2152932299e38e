/**
 * What a plan saw of each instance it plans a change for, so that apply can tell "changed after the plan saw it"
 * from "changed a moment before the plan" (issue 25: fresh changes must not be skipped as stale).
 *
 * Most plans never read the full record of an instance (a filtered list and form-field pages decide it), so they
 * do not know its `last_updated_time`. Before any of its data is read, the plan lists, per workflow it may change,
 * the running instances updated since `now - margin` (one cursor list each), and reads those few records:
 *
 * - an instance on that list: its `last_updated_time` as read then, before the plan read anything else of it, is
 *   the baseline (a change after the plan saw it shows as a different value; one between this read and the plan's
 *   own reads only makes apply refuse, the safe side);
 * - any other instance was last updated before `now - margin` when the plan looked, so the plan records
 *   `last_updated_before` = that instant; a `last_updated_time` at or after it at apply time is a change since.
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

/** One list per workflow (running instances updated since `since`, 500 a page) and one read per listed instance. */
export async function seeInstances(client: ApiClient, processIds: Iterable<number>, since: Date): Promise<SeenInstances> {
  const listed = new Set<number>();
  const query = { status: ["running"], last_updated_time_after: since.toISOString(), page_size: 500 };
  await Promise.all(
    [...new Set(processIds)].map(async (pid) => {
      for await (const item of client.instances(pid, query)) listed.add(item.id);
    }),
  );
  const recent = new Map<number, string>();
  await Promise.all(
    [...listed].map(async (id) => {
      try {
        const record = await client.getInstance(id);
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

