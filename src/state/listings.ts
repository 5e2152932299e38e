/**
 * The listings cache of the StateClient (./client.ts): a question asked before is answered from the last run's
 * elements, less what changed, plus the slices its moved time bounds swept (./bounds.ts); anything it cannot reason
 * about is asked again and written into the next state. Functions run with the client as `this`.
 */
import type { InstanceListItem, InstanceListQuery, Page } from "../api/index.js";
import {
  canonicalQuery,
  changedQuery,
  emptyRange,
  movement,
  shapeKey,
  sliceable,
  slices,
  updatedAfter,
  type CanonicalQuery,
} from "./bounds.js";
import type { ListingRef, StateIndex } from "./reader.js";
import { itemLine } from "./schema.js";
import { parsedOrNothing, type Listing, type StateRun } from "./run.js";

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
  const changed = await this.changedIds(w);
  const { ref, moved } = found;
  if (!sliceable(q) || !ref.complete) {
    // a running instance's run time grows with the clock, with no update: such a question is asked again
    const drifts =
      (q.total_runtime_min !== undefined || q.total_runtime_max !== undefined) && Date.parse(ref.run_at) !== this.nowMs;
    if (changed.size > 0 || moved.length > 0 || drifts) return yield* this.passThrough(processId, q, query);
    const cached = await this.loadListing(ref);
    if (!cached) return yield* this.passThrough(processId, q, query);
    return yield* this.replay(processId, q, query, cached);
  }
  const plan = slices(ref.query, q, moved);
  if (!plan) return yield* this.passThrough(processId, q, query);
  const listing = await this.loadListing(ref);
  if (!listing) return yield* this.passThrough(processId, q, query);

  const members = new Map<number, InstanceListItem>();
  for (const page of listing.pages)
    for (const item of page.results) if (!changed.has(item.id)) members.set(item.id, item);
  listing.pages = []; // the elements are in `members` now
  const fromCache = members.size;
  let requests = 0;
  let decided = 0;
  const list = async (slice: CanonicalQuery): Promise<InstanceListItem[]> => {
    if (emptyRange(slice)) return []; // a slice of no instant: nothing to ask
    return this.listOnce(processId, slice, () => requests++);
  };
  for (const s of plan.filter((p) => p.effect === "leave")) {
    // none cached can leave, or the kept records tell which do (./known.ts)
    const gone = members.size === 0 ? new Set<number>() : await this.leavingByRecords(s, members);
    if (gone) {
      decided++;
      for (const id of gone) members.delete(id);
      continue;
    }
    for (const item of await list(s.query)) members.delete(item.id);
  }
  const fresh: InstanceListItem[] = [];
  for (const s of plan.filter((p) => p.effect === "enter")) fresh.push(...(await list(s.query)));
  if (changed.size > 0) fresh.push(...(await list(changedQuery(q, this.since(w).at))));
  for (const item of fresh) members.set(item.id, item);
  const results = [...members.values()].sort((a, b) => a.id - b.id);
  this.saw(
    results.map((i) => i.id),
    false,
  );
  this.saw(
    fresh.map((i) => i.id),
    true,
  );
  this.opts.explain?.({
    subject: `selection ${JSON.stringify(q)}`,
    workflow_id: processId,
    choice: "state",
    requests,
    why: `${fromCache} from the state${plan.length ? `; ${plan.map((p) => p.why).join("; ")}` : ""}${decided > 0 ? ` (who left told by the records kept)` : ""}; ${changed.size > 0 ? "changed instances listed again" : "none changed"}`,
  });
  this.writeListing({
    process_id: processId,
    query: q,
    run_at: this.nowIso,
    complete: true,
    pages: [{ count: results.length, results }],
  });
  this.counted(processId, results.length);
  yield { count: results.length, next: null, previous: null, results };
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

/** A cached answer that still holds (nothing changed, no bound moved); beyond its pages, the service again. */
export async function* replay(
  this: StateRun,
  processId: number,
  q: CanonicalQuery,
  query: InstanceListQuery,
  cached: Listing,
): AsyncGenerator<Page<InstanceListItem>> {
  this.writeListing({ ...cached, query: q, run_at: this.nowIso });
  for (const [n, page] of cached.pages.entries()) {
    if (q.ordering !== undefined) for (const i of page.results) this.probes.add(i.id);
    this.saw(
      page.results.map((i) => i.id),
      false,
    );
    this.counted(processId, page.count);
    const last = n === cached.pages.length - 1;
    yield { count: page.count, next: last && cached.complete ? null : "(more)", previous: null, results: page.results };
  }
  if (cached.complete) return;
  // the caller wants more than the last run read: the same question, from its next page on
  let skip = cached.pages.length;
  for await (const page of this.service.instancePages(processId, query)) {
    if (skip-- > 0) continue;
    this.saw(
      page.results.map((i) => i.id),
      true,
    );
    yield page;
  }
}

/** A listing of the previous run, read from the file; undefined when a line does not fit (then it is asked again). */
export async function loadListing(this: StateRun, ref: ListingRef): Promise<Listing | undefined> {
  const prev = this.prev as StateIndex;
  const pages: Listing["pages"] = [];
  for (const page of ref.pages) {
    const texts = await prev.lines(page.lines);
    const results: InstanceListItem[] = [];
    for (const text of texts) {
      const item = itemLine(parsedOrNothing(text));
      if (!item) return undefined;
      results.push(item.v);
    }
    pages.push({ count: page.count, results });
  }
  return { process_id: ref.process_id, query: ref.query, run_at: ref.run_at, complete: ref.complete, pages };
}

/** A listing's elements, page by page, then its head; returns nothing to hold. */
export function writeListing(this: StateRun, listing: Listing): void {
  const n = this.out.nextListing();
  listing.pages.forEach((page, p) => this.writeItems(n, p, page.results));
  this.writeListingHead(
    n,
    listing,
    listing.pages.map((page) => ({ count: page.count, size: page.results.length })),
  );
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
