/**
 * The client of a forecast's successive plans (./forecast.ts): the data is read once, as of now, and only the instant
 * moves. Every question asked before is answered from memory. A time-relative selection is listed twice for the whole
 * horizon, at its narrowest and its widest (./forecast-horizon.ts), and answered at each point from the times in the
 * records of the instances in between (read once, most of them read anyway by the rules that read records); where
 * those reads would cost more than the points left, it is brought forward by the slices its bounds swept
 * (src/state/bounds.ts, the reasoning the state uses between runs). Field values are asked once for the instances a
 * selection may hold at any point. Nothing here may change the service: a forecast never writes.
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
import type { CompiledRule } from "../rules/types.js";
import type { Almanac } from "./almanac.js";
import { FIELD_CHUNK as FIELD_PAGE } from "./hydrate.js";
import { FieldValues } from "./forecast-fields.js";
import {
  boundIndex,
  extremes,
  horizonOf,
  fromExtremes,
  fromSweeps,
  recordTimes,
  sweeps,
  within,
  type BoundIndex,
  type HorizonEntry,
  type MovedBound,
  type Time,
} from "./forecast-horizon.js";

interface Listed {
  query: CanonicalQuery;
  at: number;
  items: InstanceListItem[];
}

type RecordOptions = { injectValues?: boolean; stepsTimeFrame?: boolean };

export class TimelineClient extends DelegatingClient {
  private nowMs: number;
  private readonly listings = new Map<string, Listed>();
  private readonly byShape = new Map<string, Listed[]>();
  private readonly records = new Map<string, Promise<InstanceRecord>>();
  private readonly fieldPages = new Map<string, Promise<Array<Page<FormFieldValue>>>>();
  private workflows: Promise<Workflow[]> | undefined;
  /** listings brought forward by slices (for the request choices a forecast explains) */
  sliced = 0;
  private readonly instantsMs: number[];
  private readonly index: BoundIndex | undefined;
  private readonly horizons = new Map<string, Promise<HorizonEntry>>();
  /** per instance, its first record read (any options): its times */
  private readonly anyRecord = new Map<number, Promise<InstanceRecord>>();
  /** the workflow each listed instance belongs to */
  private readonly workflowOf = new Map<number, number>();
  /** instances whose records the plans read */
  private readonly readByPlans = new Set<number>();
  /** per workflow, how the plans read its records (the times are read the same way, so they serve the plans too) */
  private readonly readOptions = new Map<number, RecordOptions>();
  private readonly fields: FieldValues;

  /**
   * `instants`: the forecast's points, in increasing order; `rules`: the rule set (which date bounds are relative);
   * `almanac`: the plans' facts, told which instances asked for beyond a plan's question hold no value in a field.
   */
  constructor(
    inner: ApiClient,
    instants: readonly Date[],
    opts: { rules?: readonly CompiledRule[]; almanac?: Almanac } = {},
  ) {
    super(inner);
    this.instantsMs = instants.map((d) => d.getTime());
    this.nowMs = this.instantsMs[0] ?? Date.now();
    this.index = opts.rules ? boundIndex(opts.rules, new Date(this.nowMs)) : undefined;
    this.fields = new FieldValues(inner, opts.almanac, (processId) => this.mayEnter(processId));
  }

  /** The instant of the next plan; points go forward only (bounds that moved back are another question). */
  moveTo(at: Date): void {
    this.nowMs = at.getTime();
  }

  override listWorkflows(): Promise<Workflow[]> {
    this.workflows ??= this.inner.listWorkflows();
    return this.workflows;
  }

  override getInstance(id: number, opts: RecordOptions = {}): Promise<InstanceRecord> {
    const workflow = this.workflowOf.get(id);
    if (workflow !== undefined) this.readOptions.set(workflow, opts);
    this.readByPlans.add(id);
    return this.read(id, opts);
  }

  private read(id: number, opts: RecordOptions): Promise<InstanceRecord> {
    const key = `${id}:${opts.injectValues === true}:${opts.stepsTimeFrame === true}`;
    let known = this.records.get(key);
    if (!known) {
      known = this.inner.getInstance(id, opts);
      this.records.set(key, known);
      known.catch(() => this.records.delete(key));
      const first = known;
      if (!this.anyRecord.has(id)) this.anyRecord.set(id, first);
      first.catch(() => {
        if (this.anyRecord.get(id) === first) this.anyRecord.delete(id);
      });
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
    const { instance_ids: ids, limit, ...others } = query;
    const byIds =
      Array.isArray(ids) &&
      ids.length <= FIELD_PAGE &&
      Object.keys(canonicalQuery(others)).length === 0 &&
      (limit === undefined || Number(limit) === FIELD_PAGE);
    if (byIds) return yield* this.fields.pages(processId, stepId, actionId, ids.map(Number));
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

  /** The instances of a workflow that a time-relative selection holds at some point but not at all of them. */
  private async mayEnter(processId: number): Promise<number[]> {
    const out: number[] = [];
    for (const [key, entry] of this.horizons) {
      if (!key.startsWith(`${processId}:`)) continue;
      const e = await entry.catch(() => undefined);
      if (e) out.push(...e.between);
    }
    return out;
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
    const h = this.index ? horizonOf(this.index, processId, q, this.nowMs, this.instantsMs) : undefined;
    if (h) {
      const items = await this.fromHorizon(processId, q, h.key, h.moved);
      if (items) {
        this.remember(key, shape, { query: q, at: this.nowMs, items });
        return yield* replay(items);
      }
    }
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
        for (const item of page.results) this.workflowOf.set(item.id, processId);
        yield page;
      }
      if (this.complete.has(key)) this.remember(key, shape, { query: q, at: this.nowMs, items: all });
      return;
    }
    this.remember(key, shape, { query: q, at: this.nowMs, items });
    yield* replay(items);
  }

  /** A time-relative selection's members at the current instant, from its horizon; undefined: ask as usual. */
  private async fromHorizon(
    processId: number,
    q: CanonicalQuery,
    hkey: string,
    moved: MovedBound[],
  ): Promise<InstanceListItem[] | undefined> {
    let entry = this.horizons.get(hkey);
    if (!entry) {
      entry = this.openHorizon(processId, q, moved);
      this.horizons.set(hkey, entry);
      entry.catch(() => this.horizons.delete(hkey));
    }
    const e = await entry;
    if (e.fallback) return undefined;
    const asked = JSON.stringify(q);
    const inNarrowest = e.widest.filter((i) => e.narrowest.has(i.id));
    if (e.between.length === 0 || asked === e.keys.widest)
      return sorted(asked === e.keys.widest ? e.widest : inNarrowest);
    if (asked === e.keys.narrowest) return sorted(inNarrowest);
    const times = await this.timesOf(processId, e);
    if (!times) return undefined;
    return sorted(
      e.widest.filter((i) => {
        if (e.narrowest.has(i.id)) return true;
        const t = times.get(i.id);
        return t !== undefined && within(t, e.moved, this.nowMs);
      }),
    );
  }

  /** Lists a selection at its widest and narrowest between now and the horizon, each once. */
  private async openHorizon(processId: number, q: CanonicalQuery, moved: MovedBound[]): Promise<HorizonEntry> {
    const last = this.instantsMs.at(-1) ?? this.nowMs;
    const { widest, narrowest } = extremes(q, moved, this.nowMs, Math.max(last, this.nowMs));
    const own = JSON.stringify(q);
    const list = async (query: CanonicalQuery): Promise<InstanceListItem[]> => {
      // a range we built that holds nothing is not asked; the rules' own question always is
      if (JSON.stringify(query) !== own && emptyRange(query)) return [];
      const key = `${processId}:${JSON.stringify(query)}`;
      const byId = new Map<number, InstanceListItem>();
      for await (const page of this.memo(key, () => this.inner.instancePages(processId, query)))
        for (const item of page.results) byId.set(item.id, item);
      for (const id of byId.keys()) this.workflowOf.set(id, processId);
      return [...byId.values()];
    };
    const keys = { widest: JSON.stringify(widest), narrowest: JSON.stringify(narrowest) };
    const swept = sweeps(moved, widest, this.nowMs, Math.max(last, this.nowMs));
    if (!swept) {
      const [wide, narrow] = await Promise.all([list(widest), list(narrowest)]);
      return fromExtremes(moved, keys, wide, narrow);
    }
    // the selection as the plan at the start asks it, and the slices its bounds sweep over the horizon
    const [base, ...slices] = await Promise.all([
      list(swept.base === "narrowest" ? narrowest : widest),
      ...swept.slices.map(list),
    ]);
    return fromSweeps(moved, keys, swept.base, base ?? [], slices.flat());
  }

  /**
   * The times of the instances between the narrowest and the widest, from their records: read once, with the options
   * the plans read that workflow's records with (so a rule reading records finds them read), unless that costs more
   * requests than listing at each point left; undefined then (and from then on).
   */
  private async timesOf(processId: number, e: HorizonEntry): Promise<Map<number, Map<string, Time[]>> | undefined> {
    if (e.times) return e.times;
    const unread = e.between.filter((id) => !this.anyRecord.has(id)).length;
    const pointsLeft = this.instantsMs.filter((t) => t >= this.nowMs).length;
    // a selection whose rules read records (the plans read those of its instances so far) reads the rest anyway
    const held = [...e.narrowest];
    const readAnyway = held.length > 0 && held.filter((id) => this.readByPlans.has(id)).length >= 0.9 * held.length;
    if (!readAnyway && unread > pointsLeft) {
      e.fallback = true;
      return undefined;
    }
    const opts = this.readOptions.get(processId) ?? { injectValues: true };
    const times = new Map<number, Map<string, Time[]>>();
    try {
      const records = await Promise.all(e.between.map((id) => this.anyRecord.get(id) ?? this.read(id, opts)));
      for (const [n, record] of records.entries()) {
        const id = e.between[n];
        if (id === undefined) continue;
        const t = new Map<string, Time[]>();
        for (const m of e.moved) {
          const x = recordTimes(record, m.field);
          // listed in the widest, so it has that time: without it the record cannot tell; ask as usual
          if (x.length === 0) throw new Error("no time");
          t.set(m.field, x);
        }
        times.set(id, t);
      }
    } catch {
      e.fallback = true;
      return undefined;
    }
    e.times = times;
    return times;
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

/** In id order, as a state's answer is: a plan does not depend on the order of a listing. */
function sorted(items: InstanceListItem[]): InstanceListItem[] {
  return [...items].sort((a, b) => a.id - b.id);
}

function* replay(items: InstanceListItem[]): Generator<Page<InstanceListItem>> {
  yield { count: items.length, next: null, previous: null, results: items };
}
