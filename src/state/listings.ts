/**
 * The listings cache of the StateClient (./client.ts): a question asked before is answered from the last run's
 * elements, less what changed, plus the slices its moved time bounds swept (./bounds.ts), page by page
 * (./cached-pages.ts); anything it cannot reason about is asked again and written into the next state. Functions run
 * with the client as `this`.
 */
import type { InstanceListItem, InstanceListQuery, Page } from "../api/index.js";
import { canonicalQuery, movement, shapeKey, sliceable, slices, updatedAfter, type CanonicalQuery } from "./bounds.js";
import type { ListingRef } from "./reader.js";
import type { Listing, RunWorkflow, StateRun } from "./run.js";

export async function* instancePages(
  this: StateRun,
  processId: number,
  query: InstanceListQuery = {},
): AsyncGenerator<Page<InstanceListItem>> {
  await this.ready(processId);
  const q = canonicalQuery(query);
  const w = this.workflow(processId);
  if (w.cold) return yield* this.passThrough(processId, q, query);
  // instances updated since the changes listing's start are all on it: with none, such a question holds nothing
  const after = updatedAfter(q);
  if (after !== undefined && after >= this.since(w).at) {
    const changed = await this.changedIds(w);
    // its instances are changed ones: their records read this run may tell which (./known.ts), as for a changed slice
    const known = changed.size > 0 ? await this.recentByRecords(w, q) : undefined;
    if (known) return yield* this.answered(processId, q, known);
    if (changed.size > 0) return yield* this.passThrough(processId, q, query);
    this.opts.explain?.({
      subject: `selection ${JSON.stringify(q)}`,
      workflow_id: processId,
      choice: "state",
      requests: 0,
      why: "nothing updated since the last run looked, and it asks only for instances updated later",
    });
    return yield { count: 0, next: null, previous: null, results: [] };
  }
  let found: { ref: ListingRef; moved: ReturnType<typeof movement>["moved"] } | undefined;
  for (const cand of this.oldListings.get(shapeKey(processId, q)) ?? []) {
    const mv = movement(cand.query, Date.parse(cand.run_at), q, this.nowMs);
    if (mv.ok) {
      found = { ref: cand, moved: mv.moved };
      break;
    }
  }
  if (!found) return yield* this.passThrough(processId, q, query);
  const { ref, moved } = found;
  if (!sliceable(q) || !ref.complete) {
    const changed = await this.changedIds(w);
    // a running instance's run time grows with the clock, with no update: such a question is asked again
    const drifts =
      (q.total_runtime_min !== undefined || q.total_runtime_max !== undefined) && Date.parse(ref.run_at) !== this.nowMs;
    if (moved.length > 0 || drifts) return yield* this.passThrough(processId, q, query);
    // the structure probe's answer holds when no changed instance is newer (./known.ts)
    if (changed.size > 0 && !(await this.newestHolds(w, q, ref, changed)))
      return yield* this.passThrough(processId, q, query);
    return yield* this.replay(processId, q, query, ref);
  }
  const plan = slices(ref.query, q, moved);
  if (!plan) return yield* this.passThrough(processId, q, query);
  return yield* this.sliced(processId, q, query, ref, plan, w);
}

/**
 * A question whose instances are all among the changed ones (updated after changes are listed from), decided from
 * their records as a changed slice is (./known.ts): one page, in id order (the service's for a question without an
 * ordering), written into the next state as an answer of the service's would be. Undefined (asked) when the page
 * size would split it, or a status is not one the service knows (the service's answer, an error perhaps, is the one
 * to give).
 */
export async function recentByRecords(
  this: StateRun,
  w: RunWorkflow,
  q: CanonicalQuery,
): Promise<InstanceListItem[] | undefined> {
  const statuses = q.status === undefined ? [] : [q.status].flat().map(String);
  if (statuses.some((s) => s !== "running" && s !== "completed" && s !== "aborted")) return undefined;
  const known = await this.changedByRecords(w, q);
  if (!known) return undefined;
  const size = q.page_size === undefined ? 500 : Number(q.page_size);
  return Number.isSafeInteger(size) && known.length <= size ? known : undefined;
}

export async function* answered(
  this: StateRun,
  processId: number,
  q: CanonicalQuery,
  items: InstanceListItem[],
): AsyncGenerator<Page<InstanceListItem>> {
  const n = this.out.nextListing();
  this.writeItems(n, 0, items);
  this.writeListingHead(n, { process_id: processId, query: q, run_at: this.nowIso, complete: true }, [
    { count: items.length, size: items.length },
  ]);
  this.saw(
    items.map((i) => i.id),
    true,
  );
  this.counted(processId, items.length);
  yield { count: items.length, next: null, previous: null, results: items };
}

/** Asks the service, and writes the pages read into the next state (complete once one says there is no next). */
export async function* passThrough(
  this: StateRun,
  processId: number,
  q: CanonicalQuery,
  query: InstanceListQuery,
): AsyncGenerator<Page<InstanceListItem>> {
  const n = this.out.nextListing();
  const pages: Array<{ count: number | null; size: number }> = [];
  let complete = false;
  try {
    for await (const page of this.servicePages(processId, q, query)) {
      this.writeItems(n, pages.length, page.results);
      pages.push({ count: page.count, size: page.results.length });
      complete = page.next === null;
      if (q.ordering !== undefined) for (const i of page.results) this.probes.add(i.id);
      this.saw(
        page.results.map((i) => i.id),
        true,
      );
      this.counted(processId, page.count);
      yield page;
      await this.due();
    }
    complete = true;
  } finally {
    this.writeListingHead(n, { process_id: processId, query: q, run_at: this.nowIso, complete }, pages);
  }
}

export function writeItems(this: StateRun, n: number, p: number, items: readonly InstanceListItem[]): void {
  for (const item of items) this.out.line(`{"item":{"l":${n},"p":${p},"v":${JSON.stringify(item)}}}`);
}

export function writeListingHead(
  this: StateRun,
  n: number,
  l: Pick<Listing, "process_id" | "query" | "run_at" | "complete">,
  pages: Array<{ count: number | null; size: number }>,
): void {
  this.out.line(
    JSON.stringify({
      listing: { n, process_id: l.process_id, query: l.query, run_at: l.run_at, complete: l.complete, pages },
    }),
  );
}
