/**
 * The client of a forecast's successive plans (./forecast.ts): the data is read once, as of now, and only the instant
 * moves. Every question asked before is answered from memory; a selection whose relative date bounds moved with the
 * instant is brought forward by the slices its bounds swept (src/state/bounds.ts, the reasoning the state uses between
 * runs), so a time-relative selection costs its first listing plus one small slice per point, not a listing per point.
 * Nothing here may change the service: a forecast never writes.
 */
import { DelegatingClient } from "../api/delegating.js";
import type { ApiClient, FormFieldQuery, InstanceListQuery } from "../api/client.js";
import type { Page } from "../api/pagination.js";
import type { CompleteStepBody, FormFieldValue, InstanceListItem, InstanceRecord, Workflow } from "../api/schemas.js";
import {
  canonicalQuery,
  emptyRange,
  movement,
  shapeKey,
  sliceable,
  slices,
  type CanonicalQuery,
} from "../state/bounds.js";

interface Listed {
  query: CanonicalQuery;
  at: number;
  items: InstanceListItem[];
}

export class TimelineClient extends DelegatingClient {
  private nowMs: number;
  private readonly listings = new Map<string, Listed>();
  private readonly byShape = new Map<string, Listed[]>();
  private readonly records = new Map<string, Promise<InstanceRecord>>();
  private readonly fieldPages = new Map<string, Promise<Array<Page<FormFieldValue>>>>();
  private workflows: Promise<Workflow[]> | undefined;
  /** listings brought forward by slices (for the request choices a forecast explains) */
  sliced = 0;

  constructor(inner: ApiClient, start: Date) {
    super(inner);
    this.nowMs = start.getTime();
  }

  /** The instant of the next plan; points go forward only (bounds that moved back are another question). */
  moveTo(at: Date): void {
    this.nowMs = at.getTime();
  }

  override listWorkflows(): Promise<Workflow[]> {
    this.workflows ??= this.inner.listWorkflows();
    return this.workflows;
  }

  override getInstance(
    id: number,
    opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {},
  ): Promise<InstanceRecord> {
    const key = `${id}:${opts.injectValues === true}:${opts.stepsTimeFrame === true}`;
    let known = this.records.get(key);
    if (!known) {
      known = this.inner.getInstance(id, opts);
      this.records.set(key, known);
      known.catch(() => this.records.delete(key));
    }
    return known;
  }

  override completeStep(_id: number, _body: CompleteStepBody): Promise<InstanceRecord> {
    return Promise.reject(new Error("a forecast never writes"));
  }

  override bulkAbort(_ids: number[]): Promise<{ ids: number[] }> {
    return Promise.reject(new Error("a forecast never writes"));
  }

  override async *formFieldPages(
    processId: number,
    stepId: number,
    actionId: number,
    query: FormFieldQuery = {},
  ): AsyncGenerator<Page<FormFieldValue>> {
    const key = JSON.stringify([processId, stepId, actionId, canonicalQuery(query)]);
    let known = this.fieldPages.get(key);
    if (!known) {
      known = (async () => {
        const pages: Array<Page<FormFieldValue>> = [];
        for await (const page of this.inner.formFieldPages(processId, stepId, actionId, query)) pages.push(page);
        return pages;
      })();
      this.fieldPages.set(key, known);
      known.catch(() => this.fieldPages.delete(key));
    }
    yield* await known;
  }

  override async *instances(processId: number, query: InstanceListQuery = {}): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }

  override async *instancePages(
    processId: number,
    query: InstanceListQuery = {},
  ): AsyncGenerator<Page<InstanceListItem>> {
    const q = canonicalQuery(query);
    const key = `${processId}:${JSON.stringify(q)}`;
    const exact = this.listings.get(key);
    if (exact) return yield* replay(exact.items);
    const shape = shapeKey(processId, q);
    const earlier = (this.byShape.get(shape) ?? []).at(-1);
    let items: InstanceListItem[] | undefined;
    if (earlier && sliceable(q) && sliceable(earlier.query)) {
      const mv = movement(earlier.query, earlier.at, q, this.nowMs);
      const plan = mv.ok ? slices(earlier.query, q, mv.moved) : undefined;
      if (plan) {
        const members = new Map(earlier.items.map((i) => [i.id, i]));
        const list = async (slice: CanonicalQuery): Promise<InstanceListItem[]> => {
          const out: InstanceListItem[] = [];
          if (emptyRange(slice)) return out;
          for await (const page of this.inner.instancePages(processId, slice)) out.push(...page.results);
          return out;
        };
        for (const s of plan.filter((p) => p.effect === "leave"))
          for (const item of await list(s.query)) members.delete(item.id);
        for (const s of plan.filter((p) => p.effect === "enter"))
          for (const item of await list(s.query)) members.set(item.id, item);
        // in id order, as a state's answer is: a plan does not depend on the order of a listing
        items = [...members.values()].sort((a, b) => a.id - b.id);
        this.sliced++;
      }
    }
    if (!items) {
      // asked as the engine asked it, pages taken only as far as they are read (a structure read takes one)
      const all: InstanceListItem[] = [];
      for await (const page of this.memo(key, () => this.inner.instancePages(processId, query))) {
        all.push(...page.results);
        yield page;
      }
      if (this.complete.has(key)) this.remember(key, shape, { query: q, at: this.nowMs, items: all });
      return;
    }
    this.remember(key, shape, { query: q, at: this.nowMs, items });
    yield* replay(items);
  }

  private remember(key: string, shape: string, listed: Listed): void {
    this.listings.set(key, listed);
    this.byShape.set(shape, [...(this.byShape.get(shape) ?? []), listed]);
  }

  private readonly pages = new Map<
    string,
    { pages: Array<Page<InstanceListItem>>; more: AsyncGenerator<Page<InstanceListItem>> | null }
  >();
  private readonly complete = new Set<string>();

  /** The pages of one question, each asked once however many readers take them, and only as far as one reads. */
  private async *memo(
    key: string,
    ask: () => AsyncGenerator<Page<InstanceListItem>>,
  ): AsyncGenerator<Page<InstanceListItem>> {
    let entry = this.pages.get(key);
    if (!entry) {
      entry = { pages: [], more: ask() };
      this.pages.set(key, entry);
    }
    for (let i = 0; ; i++) {
      while (i >= entry.pages.length) {
        if (!entry.more) return;
        const next = await entry.more.next();
        if (next.done) {
          entry.more = null;
          this.complete.add(key);
          return;
        }
        entry.pages.push(next.value);
      }
      const page = entry.pages[i];
      if (page) yield page;
    }
  }
}

function* replay(items: InstanceListItem[]): Generator<Page<InstanceListItem>> {
  yield { count: items.length, next: null, previous: null, results: items };
}
