/** The bookmarks a run with state leaves for the next one: per workflow, when it looked and how far it read. */
import type { Marks, WorkflowMark } from "./schema.js";
import { iso, type RunWorkflow, type StateRun } from "./run.js";

/**
 * When this run began to look, by the service's clock; null when some answer carried no Date (the next run then
 * falls back to our clock). Every answer this run used or wrote was read at or after it.
 */
function lookedAt(this: StateRun, w: RunWorkflow): string | null {
  const c = this.service.serviceClock?.();
  const before = this.clockAtStart;
  if (!c || c.earliestMs === null || c.undated > (before?.undated ?? 0)) return null;
  // nothing asked this run (everything answered by the last one's look): that look still bounds it
  if (c.answered === (before?.answered ?? 0)) return w.mark?.looked_at ?? null;
  // a changes listing a watcher's poll asked before this run began is one of its answers (./known.ts): it bounds it too
  let earliest = c.earliestMs;
  for (const l of this.opts.listed?.values() ?? []) earliest = Math.min(earliest, l.lookedMs);
  return iso(earliest);
}

/**
 * The bookmarks of the workflows this run used, for the next run. At a checkpoint (`final` false) a workflow read
 * in full this run, or whose last sync was partial, is marked partial with how far it got.
 */
export function marks(this: StateRun, final = true): Marks {
  const marks: Marks = { ...this.carriedMarks };
  for (const w of this.workflows.values()) {
    const partial = !final && (w.cold || w.partial);
    // answers carried from the last run's look, for a workflow this run used only after they were carried: the
    // next run lists changes from that older look (it covers this run's too)
    const older = this.carriedMarks[String(w.pid)];
    marks[String(w.pid)] = {
      run_at: older ? older.run_at : this.nowIso,
      looked_at: older ? (older.looked_at ?? null) : lookedAt.call(this, w),
      newest_seen: w.newestSeen === null ? null : iso(w.newestSeen),
      synced_at: w.cold || !w.mark || w.partial ? this.nowIso : w.mark.synced_at,
      structure: w.structure,
      ...(partial ? { partial: true as const, synced: w.synced, total: w.total } : {}),
    };
    // the count of this run, else the last one (a count only grows: an older one still bounds it), never one of a
    // service that went back
    const counted = this.censuses.get(w.pid) ?? (this.wentBack === undefined ? w.mark?.census : undefined);
    if (counted) marks[String(w.pid)] = { ...(marks[String(w.pid)] as WorkflowMark), census: counted };
  }
  return marks;
}
