/**
 * Staleness, cheaply. Reading every planned instance would cost one request per change; instead, per workflow of the
 * plan, one filtered v2 list (`last_updated_time_after`, cursor pages of 500) names the instances changed since the
 * plan was made. Only planned instances on that list are read and judged; the others have not changed, so what held
 * at plan time still holds.
 *
 * Clock skew: `created_at` comes from the planning host's clock, `last_updated_time` from the service's. We assume
 * they differ by less than `clockSkewMs` (default 60 s) and list from `created_at - clockSkewMs`. That margin can only
 * add instances to the list; for each of them the record's `last_updated_time` is compared with the planned one
 * (precondition.last_updated_time, or the value our own journal recorded after changing it), so an instance merely
 * touched within the margin before the plan is not stale. A plan that did not read the record records instead
 * `last_updated_before` (src/engine/seen.ts): the instance was last updated before that instant when the plan saw
 * it, so a later or equal last_updated_time is a change since the plan, an earlier one is not. A plan that recorded
 * neither (an older flowrules) is judged changed when listed (refusing is the safe side).
 */
import type { ApiClient, InstanceRecord } from "../api/index.js";
import { instantOf } from "../model/values.js";
import { activeSteps, statusOf, timeOf } from "./instance-state.js";
import type { PlannedChange } from "../plan/types.js";

/** Ids of the instances of these workflows updated at or after `since` (one list per workflow, 500 a page). */
export async function changedSince(client: ApiClient, processIds: Iterable<number>, since: Date): Promise<Set<number>> {
  const ids = new Set<number>();
  const query = { last_updated_time_after: since.toISOString(), page_size: 500 };
  await Promise.all(
    [...new Set(processIds)].map(async (pid) => {
      for await (const item of client.instances(pid, query)) ids.add(item.id);
    }),
  );
  return ids;
}

export interface StaleContext {
  /** the instance's last_updated_time the change was planned against (or that our own last change left), if known */
  baseline: string | undefined;
  /** the instance is on the changed-since list (only consulted when there is no baseline) */
  listedAsChanged: boolean;
  /** precondition.last_updated_before of the plan, when it recorded no baseline */
  seenBefore?: string | undefined;
}

/** Why the change no longer holds on this record, or undefined when it may be sent. */
export function staleReason(change: PlannedChange, record: InstanceRecord, ctx: StaleContext): string | undefined {
  const status = statusOf(record);
  if (status !== "running") {
    const when = status === "aborted" ? record.aborted_time : record.completed_time;
    return `the instance is no longer running: ${status}${when ? ` at ${when}` : ""}`;
  }
  const step = change.precondition.active_step_id;
  if (step !== undefined) {
    const active = activeSteps(record);
    if (!active.includes(step)) {
      return `step ${step} is no longer active (active: ${active.length > 0 ? active.join(", ") : "none"})`;
    }
  }
  // as instants, to the microsecond a service may keep: "…:00.123456+00:00" and "…:00.123456Z" are one time
  const now = microsOf(record.last_updated_time);
  if (ctx.baseline !== undefined) {
    const planned = microsOf(ctx.baseline);
    if (now !== undefined && now !== planned) {
      return `the instance changed since the plan: it was updated at ${record.last_updated_time ?? "an unknown time"}, and the plan saw it as last updated at ${ctx.baseline}`;
    }
    return undefined;
  }
  const bound = microsOf(ctx.seenBefore);
  if (bound !== undefined) {
    // no value but a bound: the plan saw it updated before `bound`; only an update at or after it is a change since
    if (now !== undefined && now >= bound) {
      // said plainly: the update came after the plan looked, and the plan had seen only updates before `bound`
      return `the instance changed since the plan: it was updated at ${record.last_updated_time ?? "an unknown time"}, and the plan saw it last updated before ${ctx.seenBefore ?? "?"}`;
    }
    return undefined;
  }
  if (ctx.listedAsChanged) {
    return `the instance changed since the plan: it was updated at ${record.last_updated_time ?? "an unknown time"}, and the plan recorded no earlier update time to compare with`;
  }
  return undefined;
}

function microsOf(iso: string | null | undefined): number | undefined {
  if (!iso) return undefined;
  const ms = timeOf(iso);
  return instantOf(iso) ?? (ms === undefined ? undefined : ms * 1000);
}
