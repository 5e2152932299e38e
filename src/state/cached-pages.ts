/**
 * A cached listing answered page by page (./listings.ts decides when one holds): the element lines of one page are
 * read, checked against their digests and parsed when that page is asked, then dropped, so a run never holds a
 * listing whole (docs/performance.md, "A million instances"). A listing brought up to date by slices first reads its
 * pages once for the ids alone (8 bytes an element, plus its line: the count the first page carries, and who is left
 * of it), then gives it in id order, 500 a page as the service does, each page read again when it is asked. A line
 * that no longer matches its digest (the file edited while the run held it) before anything was given makes the
 * question asked of the service as today; after some pages were given, the service answers the rest: the same
 * question from the next page on (a replay), or its elements after the last id given (a sliced listing, in id order).
 * Functions run with the client as `this`.
 */
import type { InstanceListItem, InstanceListQuery, Page } from "../api/index.js";
import { changedQuery, emptyRange, type CanonicalQuery, type Slice } from "./bounds.js";
import { NumberColumn } from "./index-tables.js";
import type { ListingRef, StateIndex } from "./reader.js";
import { itemLine } from "./schema.js";
import { parsedOrNothing, type RunWorkflow, type StateRun } from "./run.js";

/** The service's page size for a question without one (src/api/client.ts), and so a sliced listing's. */
const PAGE = 500;

type PageHead = { count: number | null; size: number };

/** The elements of one page of a cached listing, read and checked now; undefined when a line does not fit. */
export async function readPage(this: StateRun, ref: ListingRef, p: number): Promise<InstanceListItem[] | undefined> {
  const page = ref.pages[p];
  if (!page) return undefined;
  return parsedItems(await (this.prev as StateIndex).lines(page.lines));
}

function parsedItems(texts: readonly string[]): InstanceListItem[] | undefined {
  const out = new Array<InstanceListItem>(texts.length);
  for (let i = 0; i < texts.length; i++) {
    const item = itemLine(parsedOrNothing(texts[i] ?? ""));
    if (!item) return undefined;
    out[i] = item.v;
  }
  return out;
}

/** A cached answer that still holds (nothing changed, no bound moved), page by page; beyond its pages, the service. */
export async function* replay(
  this: StateRun,
  processId: number,
  q: CanonicalQuery,
  query: InstanceListQuery,
  ref: ListingRef,
): AsyncGenerator<Page<InstanceListItem>> {
  const total = ref.pages.length;
  let page: InstanceListItem[] | undefined = total > 0 ? await this.readPage(ref, 0) : [];
  if (!page) return yield* this.passThrough(processId, q, query);
  const n = this.out.nextListing();
  const heads: PageHead[] = [];
  const put = (p: number, results: InstanceListItem[]): void => {
    this.writeItems(n, p, results);
    heads.push({ count: ref.pages[p]?.count ?? null, size: results.length });
  };
  let given = 0;
  let whole = true;
  try {
    while (given < total && page) {
      const results: InstanceListItem[] = page;
      const count = ref.pages[given]?.count ?? null;
      put(given, results);
      if (q.ordering !== undefined) for (const i of results) this.probes.add(i.id);
      this.saw(
        results.map((i) => i.id),
        false,
      );
      this.counted(processId, count);
      given++;
      const last = given === total;
      yield { count, next: last && ref.complete ? null : "(more)", previous: null, results };
      if (!last) page = await this.readPage(ref, given);
    }
    whole = given === total;
  } finally {
    // a caller that stopped early: the rest is carried into the next state all the same, as it was cached
    for (let p = given; whole && p < total; p++) {
      const rest = await this.readPage(ref, p);
      if (rest) put(p, rest);
      else whole = false;
    }
    this.writeListingHead(
      n,
      { process_id: ref.process_id, query: q, run_at: this.nowIso, complete: whole && ref.complete },
      heads,
    );
  }
  if (whole && ref.complete) return;
  // the caller wants more than the cached pages hold (the last run read no further, or a line no longer fits): the
  // same question, from the next page on
  let skip = given;
  for await (const page of this.service.instancePages(processId, query)) {
    if (skip-- > 0) continue;
    this.saw(
      page.results.map((i) => i.id),
      true,
    );
    yield page;
  }
}

/** Ids and lines of a cached listing's members, in typed arrays: no object per element. */
class Members {
  readonly ids = new NumberColumn(new Float64Array(0));
  readonly lines = new NumberColumn(new Uint32Array(0));
  /** 1: not given from the cache (it left, or a fresh element of the same id replaces it) */
  out = new Uint8Array(0);
  left = 0;

  get length(): number {
    return this.ids.length;
  }

  /** Drops the members of these ids. */
  drop(ids: { has(id: number): boolean }): void {
    if (this.out.length !== this.length) this.out = new Uint8Array(this.length);
    for (let i = 0; i < this.length; i++)
      if (this.out[i] === 0 && ids.has(this.ids.at(i))) {
        this.out[i] = 1;
        this.left++;
      }
  }

  isOut(i: number): boolean {
    return this.out.length > i && this.out[i] === 1;
  }

  /** The members left, as the few the kept records may decide (./known.ts reads its size and its ids). */
  view(): { readonly size: number; keys(): IterableIterator<number> } {
    const keys = (): IterableIterator<number> => this.remaining();
    return { size: this.length - this.left, keys };
  }

  private *remaining(): IterableIterator<number> {
    for (let i = 0; i < this.length; i++) if (!this.isOut(i)) yield this.ids.at(i);
  }

  /** Positions in id order (the service's order for a question without one). */
  order(): Uint32Array {
    const order = new Uint32Array(this.length);
    let sorted = true;
    for (let i = 0; i < order.length; i++) {
      order[i] = i;
      if (i > 0 && this.ids.at(i) < this.ids.at(i - 1)) sorted = false;
    }
    if (!sorted) order.sort((a, b) => this.ids.at(a) - this.ids.at(b));
    return order;
  }
}

/**
 * A cached listing brought up to date: less what changed and what left by the moved bounds, plus what entered and the
 * changed instances it holds now; in id order, page by page. A listing whose lines do not fit before anything is given
 * is asked of the service.
 */
export async function* sliced(
  this: StateRun,
  processId: number,
  q: CanonicalQuery,
  query: InstanceListQuery,
  ref: ListingRef,
  plan: readonly Slice[],
  w: RunWorkflow,
): AsyncGenerator<Page<InstanceListItem>> {
  const changed = await this.changedIds(w);
  const members = new Members();
  for (let p = 0; p < ref.pages.length; p++) {
    const items = await this.readPage(ref, p);
    if (!items) return yield* this.passThrough(processId, q, query);
    const lines = ref.pages[p]?.lines as Uint32Array;
    for (const [k, item] of items.entries())
      if (!changed.has(item.id)) {
        members.ids.push(item.id);
        members.lines.push(lines[k] as number);
      }
  }
  const fromCache = members.length;
  let requests = 0;
  let decided = 0;
  const list = async (
    slice: CanonicalQuery,
    derive?: () => Promise<InstanceListItem[] | undefined>,
  ): Promise<InstanceListItem[]> => {
    if (emptyRange(slice)) return []; // a slice of no instant: nothing to ask
    return this.listOnce(processId, slice, () => requests++, derive);
  };
  for (const s of plan.filter((p) => p.effect === "leave")) {
    const view = members.view();
    // none cached can leave, or the kept records tell which do (./known.ts)
    const gone = view.size === 0 ? new Set<number>() : await this.leavingByRecords(s, view);
    if (gone) {
      decided++;
      members.drop(gone);
      continue;
    }
    members.drop(new Set((await list(s.query)).map((i) => i.id)));
  }
  const listed: InstanceListItem[] = [];
  for (const s of plan.filter((p) => p.effect === "enter")) listed.push(...(await list(s.query)));
  if (changed.size > 0) {
    const slice = changedQuery(q, this.since(w).at);
    // the changed instances' records, read this run, may tell which of them it holds (./known.ts)
    listed.push(...(await list(slice, () => this.changedByRecords(w, slice))));
  }
  const freshById = new Map<number, InstanceListItem>();
  for (const item of listed) freshById.set(item.id, item);
  members.drop(freshById);
  const fresh = [...freshById.values()].sort((a, b) => a.id - b.id);
  const total = members.length - members.left + fresh.length;
  this.saw(
    listed.map((i) => i.id),
    true,
  );
  this.opts.explain?.({
    subject: `selection ${JSON.stringify(q)}`,
    workflow_id: processId,
    choice: "state",
    requests,
    why: `${fromCache} from the state${plan.length ? `; ${plan.map((p) => p.why).join("; ")}` : ""}${decided > 0 ? ` (who left told by the records kept)` : ""}; ${changed.size > 0 ? "changed instances listed again" : "none changed"}`,
  });
  this.counted(processId, total);

  const order = members.order();
  let ki = 0;
  let fi = 0;
  let lastId = -Infinity;
  /** the rest of the answer from the service, once a line no longer fits (the file was edited under the run) */
  let rest: InstanceListItem[] | undefined;
  const nextPage = async (): Promise<InstanceListItem[] | undefined> => {
    if (rest) return rest.splice(0, PAGE);
    const picks: Array<InstanceListItem | number> = [];
    const lines: number[] = [];
    while (picks.length < PAGE) {
      while (ki < order.length && members.isOut(order[ki] as number)) ki++;
      const k = ki < order.length ? (order[ki] as number) : -1;
      const f = fresh[fi];
      if (k < 0 && !f) break;
      if (f && (k < 0 || f.id < members.ids.at(k))) {
        picks.push(f);
        fi++;
      } else {
        picks.push(members.ids.at(k));
        lines.push(members.lines.at(k));
        ki++;
      }
    }
    const read = lines.length > 0 ? parsedItems(await (this.prev as StateIndex).lines(lines)) : [];
    let r = 0;
    const page = read
      ? picks.map((pick) => {
          if (typeof pick !== "number") return pick;
          const item = read[r++] as InstanceListItem;
          return item.id === pick ? item : undefined;
        })
      : [undefined];
    if (page.every((i): i is InstanceListItem => i !== undefined)) return page;
    rest = [];
    for await (const p of this.service.instancePages(processId, query))
      for (const item of p.results) if (item.id > lastId) rest.push(item);
    this.saw(
      rest.map((i) => i.id),
      true,
    );
    return rest.splice(0, PAGE);
  };
  const n = this.out.nextListing();
  const heads: PageHead[] = [];
  let given = 0;
  let whole = true;
  const put = (results: InstanceListItem[]): void => {
    this.writeItems(n, heads.length, results);
    heads.push({ count: total, size: results.length });
    given += results.length;
    const last = results.at(-1);
    if (last) lastId = last.id;
    this.saw(
      results.map((i) => i.id),
      false,
    );
  };
  try {
    do {
      const results = await nextPage();
      // nothing more where more was counted (the service's rest, after a line no longer fit, was shorter)
      if (!results || (results.length === 0 && heads.length > 0)) {
        whole = false;
        break;
      }
      put(results);
      yield { count: total, next: given >= total ? null : "(more)", previous: null, results };
    } while (given < total);
  } finally {
    // a caller that stopped early: the rest is written into the next state all the same, as a stateless run's would be
    while (whole && given < total) {
      const results = await nextPage().catch(() => undefined);
      if (results && results.length > 0) put(results);
      else whole = false;
    }
    this.writeListingHead(n, { process_id: processId, query: q, run_at: this.nowIso, complete: whole }, heads);
  }
}

/** A cached listing copied into the next state page by page (`apply plan.json --state`); left out when page 1 does not fit. */
export async function copyListing(this: StateRun, ref: ListingRef): Promise<void> {
  let page = ref.pages.length > 0 ? await this.readPage(ref, 0) : [];
  if (!page) return;
  const n = this.out.nextListing();
  const heads: PageHead[] = [];
  for (let p = 0; p < ref.pages.length && page; p++) {
    this.writeItems(n, p, page);
    heads.push({ count: ref.pages[p]?.count ?? null, size: page.length });
    page = p + 1 < ref.pages.length ? await this.readPage(ref, p + 1) : undefined;
  }
  // a page that no longer fits ends the listing there: the next run asks for the rest (an incomplete listing)
  const complete = ref.complete && heads.length === ref.pages.length;
  this.writeListingHead(n, { process_id: ref.process_id, query: ref.query, run_at: ref.run_at, complete }, heads);
}
