/**
 * Whether the service went back since the last run (./went-back.ts: a restored backup, a reset), asked by the
 * StateClient (./client.ts) before anything is answered from the state: one count of one workflow, its clock, and the
 * changes listing of every workflow the last run used (each asked once a run anyway). If it did, every workflow is
 * read afresh, with one warning. Functions run with the client as `this`.
 */
import { censusWentBack, censusWorkflow, clockWentBack, newestWentBack, type Census } from "./went-back.js";
import type { StateRun } from "./run.js";

/** The census's question: one element, the newest started (the structure probe asks the same: ./listings.ts). */
export const CENSUS_QUERY = { ordering: "-started_time", page_size: 1 } as const;

export function checkBack(this: StateRun): Promise<void> {
  this.back ??= (async () => {
    const marks = this.prev?.marks;
    if (!marks) return;
    const pid = censusWorkflow(marks);
    if (pid === undefined) return;
    const census = await this.census(pid);
    const before = marks[String(pid)]?.census;
    const why =
      clockWentBack(this.service.serviceClock?.()?.latestMs ?? null, marks, this.opts.marginMs) ??
      (before ? censusWentBack(pid, before, census) : undefined);
    if (why !== undefined) return this.goneBack(why);
    const warm = Object.keys(marks)
      .map((key) => this.workflow(Number(key)))
      .filter((w) => !w.cold);
    const listed = await Promise.all(warm.map(async (w) => ({ w, ids: await this.changedIds(w) })));
    for (const { w, ids } of listed) {
      const seen = w.mark?.newest_seen ? Date.parse(w.mark.newest_seen) : null;
      const back = newestWentBack(w.pid, seen, this.since(w).at, ids.size);
      if (back !== undefined) return this.goneBack(back);
    }
  })();
  return this.back;
}

/**
 * Before the first answer about workflow `pid`: that the service went back is decided (checkBack); and a run that
 * found no count to compare with (the first with state, or after the service went back) counts this workflow, so
 * the next run can compare.
 */
export async function ready(this: StateRun, pid: number): Promise<void> {
  await this.checkBack();
  if (this.censuses.size > 0 || this.baseline) return;
  this.baseline = true;
  if (this.wentBack === undefined && Object.values(this.prev?.marks ?? {}).some((m) => m.census)) return;
  await this.census(pid);
}

/** Nothing of the previous state is used from here on (nothing was answered from it yet): said once. */
export function goneBack(this: StateRun, why: string): void {
  this.wentBack = why;
  for (const w of this.workflows.values()) {
    w.cold = true;
    w.newestSeen = null;
  }
  this.opts.warn(
    `state: the service went back since the last run (${why}), as after a restored backup or a reset: the state is not used, everything is read afresh`,
  );
}

/** One listing of one element: the workflow's count and newest started instance, kept for the next run. */
export async function census(this: StateRun, pid: number): Promise<Census> {
  let found: Census = { count: null, newest: null };
  for await (const page of this.service.instancePages(pid, CENSUS_QUERY)) {
    found = { count: page.count, newest: page.results[0]?.id ?? null };
    // the same question as the structure probe's (its newest instance): the probe is answered with this page
    this.censusPages.set(pid, page);
    break; // one page of one element
  }
  this.censuses.set(pid, found);
  this.opts.explain?.({
    subject: "the service's count",
    workflow_id: pid,
    choice: "list",
    requests: 1,
    why: `${found.count ?? "an unknown number of"} instances, the newest started ${found.newest ?? "none"}: a service that went back (a restored backup, a reset) is read afresh`,
  });
  return found;
}
