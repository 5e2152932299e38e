/**
 * Runs a query plan (./query-plan.ts) against the API: each listed selection is listed once (all its pages) and
 * kept for the run; a filtered selection is computed from its parent's list elements or records. Every choice is
 * told to `explain` as it is made.
 */
import type { ApiClient, InstanceListItem, InstanceRecord } from "../api/index.js";
import type { Almanac } from "./almanac.js";
import { readAndKeepRecords } from "./hydrate.js";
import type { ClientFilter, QueryPlan, Selection } from "./query-plan.js";
import { plural } from "../text/plural.js";
import { IdSet } from "../model/id-set.js";
import { ItemTable } from "./item-table.js";

export interface RequestChoice {
  /** what the choice is about: a selection (its query in words), a rule's priority, a field */
  subject: string;
  workflow_id: number;
  choice: string;
  /** requests it costs (estimated before, for choices made from a count) */
  requests: number;
  why: string;
  rules?: string[];
}

export interface Listing {
  /**
   * the elements this run plans (the shard's share when sharded), in the service's order: held for the run in typed
   * arrays (./item-table.ts), each made again when read
   */
  items: ItemTable;
  /** the selection's total as the service counts it (all shards) */
  count: number;
}

/** A selection's query in words, without ids of instances: `status=running, active_step_id=20111`. */
export function queryWords(s: Selection): string {
  const parts = Object.entries(s.query).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`);
  return parts.length > 0 ? parts.join(", ") : "(all instances)";
}

/**
 * The one line a listing gets when the service repeated items in it, or handed over more distinct instances than the
 * count it announced last; undefined when neither happened.
 */
export function listingWarning(
  sel: Selection,
  read: number,
  distinct: number,
  count: number | null,
): string | undefined {
  const what = `listing instances of workflow ${sel.processId} (${queryWords(sel)})`;
  const problems: string[] = [];
  if (read > distinct) {
    const n = read - distinct;
    problems.push(
      `the service listed ${plural(n, "item")} more than once (${plural(read, "item")} for ${plural(distinct, "instance")}); each instance is planned once`,
    );
  }
  if (count !== null && distinct > count)
    problems.push(`it held ${plural(distinct, "instance")}, more than the ${count} its count announced`);
  // fewer is an error when nothing repeated (src/api/pagination.ts); repeats can hide it: said, the rest is planned
  if (count !== null && read > distinct && distinct < count)
    problems.push(
      `only ${distinct} of the ${count} instances its count announced were listed; the others are planned on a later run`,
    );
  return problems.length > 0 ? `${what}: ${problems.join("; ")}` : undefined;
}

const STATUSES = { running: "running", completed: "completed", aborted: "aborted" } as const;

/**
 * What the engine reads of a list element, and nothing else: a service's element may carry many more keys (the
 * schema keeps them), and a listing is held for the whole run (docs/performance.md, "Memory"); the status is one
 * shared string, not a copy per element.
 */
function compact(item: InstanceListItem): InstanceListItem {
  return {
    id: item.id,
    name: item.name,
    status: STATUSES[item.status],
    ...(item.public_url !== undefined ? { public_url: item.public_url } : {}),
  };
}

/** Whether a list element (and its record, for the filters that need one) passes filters as the service would. */
export function passesFilters(
  item: InstanceListItem,
  filters: readonly ClientFilter[],
  record: InstanceRecord | undefined,
): boolean {
  return filters.every((f) => {
    switch (f.key) {
      case "status":
        return f.values.includes(item.status);
      case "priority":
        return record?.priority === f.value;
      case "active_step_id":
        return (record?.active_step_ids ?? []).includes(f.step);
      case "tags":
        return (record?.tags ?? []).includes(f.tag);
    }
    return false;
  });
}

export class QueryRunner {
  private readonly listings = new Map<string, Promise<Listing>>();
  private readonly recordsKept = new Map<string, Promise<void>>();
  private readonly idLists = new Map<string, Promise<IdSet>>();

  constructor(
    private readonly client: ApiClient,
    readonly plan: QueryPlan,
    private readonly almanac: Almanac,
    private readonly opts: {
      shard?: { index: number; count: number };
      /** field keys any rule of a workflow reads, by workflow */
      knownKeys: (processId: number) => readonly string[];
      /** whether a workflow's records are read with step completion times */
      times?: (processId: number) => boolean;
      explain: (c: RequestChoice) => void;
      /** one line per listing the service answered oddly (repeated items, more than its count) */
      warn?: (message: string) => void;
    },
  ) {}

  private inShard(items: InstanceListItem[]): InstanceListItem[] {
    const s = this.opts.shard;
    return s ? items.filter((i) => i.id % s.count === s.index) : items;
  }

  /** The selection's elements, listed or filtered once per run whoever asks. */
  listing(id: string): Promise<Listing> {
    let p = this.listings.get(id);
    if (!p) {
      p = this.load(id);
      // a failure is the failure of every rule using it, reported when each awaits it
      p.catch(() => undefined);
      this.listings.set(id, p);
    }
    return p;
  }

  /**
   * The ids of a selection no rule selects, only priority lists (./plan-live.ts): listed once whoever asks, page by
   * page, and only its ids kept, in a typed-array set: a priority list is asked which instances it holds, nothing
   * else of them. The same requests, warning and explanation as its listing ({@link pages}).
   */
  idsOf(id: string): Promise<IdSet> {
    let p = this.idLists.get(id);
    if (!p) {
      p = (async () => {
        const ids = new IdSet();
        for await (const page of this.pages(id)) for (const item of page.items) ids.add(item.id);
        return ids;
      })();
      p.catch(() => undefined);
      this.idLists.set(id, p);
    }
    return p;
  }

  /** Reads (once) and keeps the records of a selection's elements, for the filters that need them. */
  keepRecords(id: string): Promise<void> {
    let p = this.recordsKept.get(id);
    if (!p) {
      p = (async () => {
        const { items } = await this.listing(id);
        await this.keepRecordsOf(this.selection(id).processId, items.ids());
      })();
      p.catch(() => undefined);
      this.recordsKept.set(id, p);
    }
    return p;
  }

  /** Reads and keeps the records of these instances of a workflow not kept yet (with completion times if needed). */
  async keepRecordsOf(processId: number, ids: readonly number[]): Promise<void> {
    const times = this.opts.times?.(processId) === true;
    const missing = ids.filter((i) => !this.almanac.records.has(i) || (times && !this.almanac.timed.has(i)));
    await readAndKeepRecords(this.client, this.almanac, missing, this.opts.knownKeys(processId), times);
  }

  selection(id: string): Selection {
    const s = this.plan.selections.get(id);
    if (!s) throw new Error(`query plan has no selection ${id}`);
    return s;
  }

  private async load(id: string): Promise<Listing> {
    const sel = this.selection(id);
    const src = sel.source;
    if (src.kind === "filter") {
      const parent = await this.listing(src.parent);
      if (src.records) await this.keepRecords(src.parent);
      const items = parent.items.where((i) => passesFilters(i, src.filters, this.almanac.records.get(i.id)));
      return { items, count: items.length };
    }
    const all = new ItemTable();
    let count = 0;
    for await (const page of this.pages(id)) {
      count = page.count;
      for (const item of page.items) all.push(item);
    }
    return { items: all.sealed(), count: Math.max(count, all.length) };
  }

  /**
   * A listed selection page by page, for the rules that use it and the selections filtered from it
   * (./stream-group.ts): its elements are never all held at once. The same requests, warning and explanation as a
   * listing kept whole ({@link listing}), which is this stream collected.
   */
  async *pages(id: string): AsyncGenerator<{ items: InstanceListItem[]; count: number }> {
    const sel = this.selection(id);
    let count = 0;
    let pages = 0;
    let kept = 0;
    // a listing that repeats an instance (a service quirk, or pages shifting under concurrent inserts) counts it
    // once: each instance is planned, reported and counted once, and the listing says so in one warning; the ids in
    // typed arrays (~16 bytes an id, not a Set's 20–40: a listing of a million instances is held this way to its end)
    const ids = new IdSet();
    let read = 0;
    let counted: number | null = null;
    for await (const page of this.client.instancePages(sel.processId, sel.query)) {
      pages += 1;
      counted = page.count;
      read += page.results.length;
      const fresh: InstanceListItem[] = [];
      for (const item of page.results) {
        if (ids.add(item.id)) fresh.push(item);
      }
      count = page.count ?? count + fresh.length;
      const items = this.inShard(fresh).map(compact);
      kept += items.length;
      yield { items, count: Math.max(count, kept) };
    }
    const warning = listingWarning(sel, read, ids.size, counted);
    if (warning) this.opts.warn?.(warning);
    this.opts.explain({
      subject: queryWords(sel),
      workflow_id: sel.processId,
      choice: "list",
      requests: pages,
      why: sel.why,
      rules: sel.users,
    });
  }
}
