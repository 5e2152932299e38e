/**
 * Whether the service went back since the last run (a backup restored, a sandbox reset, a profile pointed at a
 * restored tenant): then nothing the state holds can be trusted to still be what the service says, and the run reads
 * afresh (docs/operating.md, "State between runs": what the state can and cannot notice). The MAC proves who wrote
 * the state, not that the service still agrees with it; these checks are what the service says back, at the cost of
 * one request a run (the census of one workflow) and nothing per instance.
 *
 * A faithful service never loses an instance (none is deleted: aborts and completions keep it), never moves a
 * last_updated_time back, and its clock runs forward. So each of these means it went back:
 * - its clock (the Date of its answers) is earlier than when the last run looked, by that same clock;
 * - one workflow (the census: the one with the most instances, counted with one listing of one element) holds
 *   fewer instances than the last count, or its newest started instance changed without its count growing (the
 *   newest the last run saw is gone);
 * - a workflow whose newest update the last run read is later than the changes listing's start lists no change.
 * Pure: the client (client.ts) asks and decides what to read afresh.
 */
import type { WorkflowMark } from "./schema.js";

/** What one listing of one element said of a workflow: its count and its newest started instance. */
export interface Census {
  /** null when the service's pages carry no count */
  count: number | null;
  /** the newest started instance (ordering -started_time), null when the workflow holds none */
  newest: number | null;
}

/** The workflow to count this run: the one the last count found largest (the lowest id among equals), or none. */
export function censusWorkflow(marks: Readonly<Record<string, WorkflowMark>>): number | undefined {
  let best: { pid: number; count: number } | undefined;
  for (const [key, mark] of Object.entries(marks)) {
    const pid = Number(key);
    const count = mark.census ? (mark.census.count ?? 0) : -1;
    if (!best || count > best.count || (count === best.count && pid < best.pid)) best = { pid, count };
  }
  return best?.pid;
}

/** Why the counts say the service went back, or undefined. `before` is the last run's census of that workflow. */
export function censusWentBack(pid: number, before: Census, now: Census): string | undefined {
  if (now.count === null || before.count === null) return undefined;
  if (now.count < before.count)
    return `workflow ${pid} holds ${now.count} instances, the last run counted ${before.count}`;
  if (before.newest !== null && now.newest !== before.newest && now.count <= before.count) {
    return `the newest instance of workflow ${pid} the last run saw (${before.newest}) is gone`;
  }
  return undefined;
}

/** Why the service's clock says it went back, or undefined: its latest Date before the last run's look. */
export function clockWentBack(
  latestMs: number | null,
  marks: Readonly<Record<string, WorkflowMark>>,
  marginMs: number,
): string | undefined {
  if (latestMs === null) return undefined;
  let looked = Number.NEGATIVE_INFINITY;
  for (const mark of Object.values(marks)) {
    const t = mark.looked_at ? Date.parse(mark.looked_at) : Number.NaN;
    if (!Number.isNaN(t) && t > looked) looked = t;
  }
  if (latestMs + marginMs >= looked) return undefined;
  return `its clock says ${new Date(latestMs).toISOString()}, earlier than when the last run looked (${new Date(looked).toISOString()})`;
}

/**
 * Why a workflow's changes listing says the service went back, or undefined: the last run read an update later than
 * the listing's start, so that instance (updated since, or not) must be on it.
 */
export function newestWentBack(
  pid: number,
  newestSeenMs: number | null,
  sinceMs: number,
  listed: number,
): string | undefined {
  if (newestSeenMs === null || listed > 0 || newestSeenMs <= sinceMs) return undefined;
  return `workflow ${pid} lists no instance updated since ${new Date(sinceMs).toISOString()}, but the last run read one updated at ${new Date(newestSeenMs).toISOString()}`;
}
