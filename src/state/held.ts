/**
 * A partial plan's answers (docs/operating.md, "A partial plan"): when --max-duration cuts a run, the rules it cut are
 * planned again from what the state holds, through this client, which never asks the service.
 *
 * What is sound: an answer is used only where it is the service's data at this run's `now`. From the file as this
 * run's last checkpoint left it: the answers of workflows whose bookmark is this run's (read, or shown unchanged, by
 * it). From the previous complete state, when this run was using one (a steady run): its answers about the instances
 * that this run's changes listing of the workflow does not name (an instance's data changes only with its
 * last_updated_time), for a question asked exactly as this run asks it; a listing of it lacks the changed instances,
 * which may have entered or left, so it is a part of its selection, and its count is not known then. A listing the
 * sync did not finish ends where it was cut, and an instance whose data the rules read is not all held (a record, a
 * field value) is left out of every listing, for every rule alike: each rule is planned over part of its selection,
 * never with made-up data, and a conflict between two rules on one instance is seen as in a complete plan. A list a
 * rule reads beside its selection (an exclusion by tag, a step's activity) is used only whole (the caller judges one
 * that lacks only the instances changed since the previous state: src/commands/partial-plan.ts). A question whose
 * bounds relative to `now` moved since the previous state is answered from a listing of that state containing it,
 * each unchanged instance placed at this run's `now` by its held record (./held-moved.ts). What each listing was
 * (`served`) lets the caller judge each rule. Anything else it does not hold fails the rule that asked.
 */
import {
  DelegatingClient,
  type ApiClient,
  type FormFieldQuery,
  type FormFieldValue,
  type InstanceListItem,
  type InstanceListQuery,
  type InstanceRecord,
  type Page,
  type Workflow,
} from "../api/index.js";
import { isRecord } from "../model/guards.js";
import { canonicalQuery, sliceable, type CanonicalQuery } from "./bounds.js";
import { HeldMemo, listingKey } from "./held-memo.js";
import { expandRecord } from "./compact.js";
import { fromContaining } from "./held-moved.js";
import type { ListingRef, RecordRef, StateIndex } from "./reader.js";
import { RecordEntrySchema, itemLine, valueLine } from "./schema.js";
import { flagsOf, idsOnly, parsedOrNothing } from "./run.js";

/** An answer the state does not hold: the rule that asked for it is not planned from the state. */
export class NotHeld extends Error {}

/** What a planning pass through a HeldClient asked for, per workflow: the kinds of data its rules read. */
export interface Asked {
  /** record read options ("v", "vt", …) */
  records: Map<number, Set<string>>;
  /** fields, as "step:action" */
  fields: Map<number, Set<string>>;
}

const BATCH = 2_000;

/**
 * The previous complete state, for a run that was using it when it was cut (a steady run): its answers about an
 * instance hold at this run's `now` when this run's changes listing of the workflow (everything updated since that
 * state looked, docs/operating.md "State between runs") does not name the instance.
 */
export interface OlderAnswers {
  index: StateIndex;
  /**
   * The instances of a workflow updated since the previous state looked, as this run listed them; undefined when
   * this run did not list them before the cut, reads the workflow afresh, or found that the service went back.
   */
  changed(processId: number): ReadonlySet<number> | undefined;
}

/** Where a partial plan's answers come from. */
export interface HeldSources {
  /** the state file as this run's last checkpoint left it; undefined when it wrote none */
  current: StateIndex | undefined;
  /** whether `current`'s answers of a workflow are this run's */
  usable(processId: number): boolean;
  older?: OlderAnswers | undefined;
}

/** A listing a planning pass was answered, as the state holds it. */
export interface Served {
  processId: number;
  query: CanonicalQuery;
  /** the state's file it came from, and its head there */
  index: StateIndex;
  ref: ListingRef;
  /** instances left out because they changed since the previous state looked (an older state's listing) */
  changed: ReadonlySet<number> | undefined;
  /** the service's count of this selection at this run's `now`; null when not known */
  count: number | null;
  /** not all of the selection: read only in part before the cut, or instances changed since it was read */
  part: boolean;
  /** instances left out of it because some data the rules read of them is not held */
  dropped: InstanceListItem[];
  /**
   * a question whose bounds moved since the previous state, answered from a held listing containing it
   * (./held-moved.ts): the elements of that listing it keeps; undefined when the listing is the question's own
   */
  keep?: ReadonlySet<number> | undefined;
}

type Found = Omit<Served, "dropped" | "part">;

/** Per question, the held listing found for it, or why none (./held.ts, HeldClient). */
export type HeldAnswers = Map<string, Promise<Found | string>>;

const RECORD_FLAGS = ["", "v", "t", "vt"];

export class HeldClient extends DelegatingClient {
  /** workflows where a listing ended where the sync was cut, or an instance was left out */
  readonly partial = new Set<number>();
  /** an answer was asked for that is not held: the next pass leaves out more instances */
  missed = false;
  readonly asked: Asked = { records: new Map(), fields: new Map() };
  /** instances listed so far, with their workflow */
  readonly listedIn = new Map<number, number>();
  /** the listings answered, by question */
  readonly served = new Map<string, Served>();
  /** the questions answered empty from what the live run was answered */
  readonly emptied = new Set<string>();

  /**
   * @param drops per question, the instances left out of its listing (some data its rules read of them is not held)
   * @param whole questions answered only when held whole: lists a rule reads beside its selection (an exclusion by
   *   tag, a step's activity, a priority), where a part would be wrong, not partial
   * @param found per question, the held listing found for it, or why none: the same in every pass, so shared by them
   */
  constructor(
    live: ApiClient,
    private readonly src: HeldSources,
    private readonly memo: HeldMemo,
    private readonly drops: ReadonlyMap<string, ReadonlySet<number>>,
    private readonly whole: ReadonlySet<string> = new Set(),
    private readonly found: HeldAnswers = new Map(),
  ) {
    super(live);
  }

  private note(map: Map<number, Set<string>>, pid: number, kind: string): void {
    let s = map.get(pid);
    if (!s) map.set(pid, (s = new Set()));
    s.add(kind);
  }

  override listWorkflows(): Promise<Workflow[]> {
    const w = this.memo.workflows;
    return w ? Promise.resolve(w) : Promise.reject(new NotHeld("the list of workflows was not read before the cut"));
  }

  override async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }

  /** The held listing of a question, or why none is held (asked once a pass). */
  private find(processId: number, key: string, q: CanonicalQuery): Promise<Found | string> {
    let p = this.found.get(key);
    if (!p) this.found.set(key, (p = this.look(processId, key, q)));
    return p;
  }

  /**
   * The held listing of a question: this run's, else the previous state's where this run listed what changed (its
   * own question, else one containing it when its bounds moved with the clock).
   */
  private async look(processId: number, key: string, q: CanonicalQuery): Promise<Found | string> {
    const notListed = `a selection of workflow ${processId} was not listed before the cut`;
    const { current, usable, older } = this.src;
    // a listing begun but cut before its first page holds nothing: not listed
    const begun = (ref: ListingRef | undefined): ListingRef | undefined =>
      ref && (ref.complete || ref.pages.length > 0) ? ref : undefined;
    const mine = current && usable(processId) ? begun(current.listings.get(key)) : undefined;
    if (current && mine)
      return {
        processId,
        query: q,
        index: current,
        ref: mine,
        changed: undefined,
        count: mine.pages[0]?.count ?? null,
      };
    const changed = older?.changed(processId);
    if (!older || !changed) return notListed;
    const lookedAt = older.index.marks[String(processId)]?.run_at;
    const ref = begun(older.index.listings.get(key));
    // answered as of the previous state's look of the workflow (the changes listing starts there)
    if (!ref || ref.run_at !== lookedAt) {
      // asked with bounds relative to `now` that moved since: from a held listing containing it (./held-moved.ts)
      const got = await fromContaining(older.index, processId, q, changed, lookedAt, (ids) => this.heldTimes(ids));
      return typeof got === "string" ? got : { processId, query: q, index: older.index, changed, ...got };
    }
    // a run time grows with the clock with no update: such a question is this run's only
    if (q.total_runtime_min !== undefined || q.total_runtime_max !== undefined) return notListed;
    // an ordering or a paging names instances by rank: it holds only when nothing changed (bounds.ts, sliceable)
    if (changed.size > 0 && !sliceable(q)) return notListed;
    const count = changed.size === 0 ? (ref.pages[0]?.count ?? null) : null;
    return { processId, query: q, index: older.index, ref, changed, count };
  }

  /**
   * The top-level keys of a held record of each instance, read with any options (its times are in each), from its
   * line as verified, without rebuilding its snapshot; an instance with none held, or whose line no longer fits, is
   * not in the answer. Lines of one file are read together (nearby ones in one read).
   */
  private async heldTimes(ids: readonly number[]): Promise<Map<number, Readonly<Record<string, unknown>>>> {
    const byIndex = new Map<StateIndex, Array<{ id: number; line: number }>>();
    for (const id of ids) {
      const held = RECORD_FLAGS.map((f) => this.heldRecord(id, f)).find((h) => h !== undefined);
      if (!held) continue;
      let list = byIndex.get(held.index);
      if (!list) byIndex.set(held.index, (list = []));
      list.push({ id, line: held.ref.line });
    }
    const out = new Map<number, Readonly<Record<string, unknown>>>();
    for (const [index, list] of byIndex) {
      const texts = await index.lines(list.map((l) => l.line));
      list.forEach(({ id }, k) => {
        const raw = parsedOrNothing(texts[k] ?? "");
        const compact = isRecord(raw) && isRecord(raw.record) ? raw.record.compact : undefined;
        const record = isRecord(compact) ? compact.record : undefined;
        if (isRecord(record) && record.id === id) out.set(id, record);
      });
    }
    return out;
  }

  /** The service's count of a selection at this run's `now`, from a listing of it held; null when none is. */
  async countOf(processId: number, query: InstanceListQuery): Promise<number | null> {
    const found = await this.find(processId, listingKey(processId, query), canonicalQuery(query));
    return typeof found === "string" ? null : found.count;
  }

  /** The elements of a listing answered (an older state's changed instances left out); undefined when one no longer fits. */
  async elements(s: Served): Promise<InstanceListItem[] | undefined> {
    const out: InstanceListItem[] = [];
    for (const page of s.ref.pages)
      for (const text of await s.index.lines(page.lines)) {
        const item = itemLine(parsedOrNothing(text));
        if (!item) return undefined;
        if (!s.changed?.has(item.v.id) && (!s.keep || s.keep.has(item.v.id))) out.push(item.v);
      }
    return out;
  }

  override async *instancePages(
    processId: number,
    query: InstanceListQuery = {},
  ): AsyncGenerator<Page<InstanceListItem>> {
    const key = listingKey(processId, query);
    const q = canonicalQuery(query);
    const found = await this.find(processId, key, q);
    if (typeof found === "string") {
      if (this.memo.empty.has(key)) {
        this.emptied.add(key);
        return yield { count: 0, next: null, previous: null, results: [] };
      }
      if (!this.src.usable(processId) && !this.src.older?.changed(processId))
        throw new NotHeld(`workflow ${processId} was not read again before the cut`);
      throw new NotHeld(found);
    }
    const { ref, changed, index, keep } = found;
    // an ordered listing names instances by rank (the structure probe, the oldest first): its first pages are the
    // service's first pages, nothing is left out of it, and asking past the pages held is not answered
    const ranked = q.ordering !== undefined;
    // changed since the previous state looked: such instances may have entered or left
    const part = !ranked && (!ref.complete || (changed !== undefined && changed.size > 0));
    if (part && this.whole.has(key))
      throw new NotHeld(`a list of workflow ${processId} it reads beside its selection is not held whole`);
    const served: Served = { ...found, part, dropped: [] };
    this.served.set(key, served);
    if (part) this.partial.add(processId);
    const drop = ranked ? undefined : this.drops.get(key);
    for (const [n, page] of ref.pages.entries()) {
      const texts = await index.lines(page.lines);
      const items: InstanceListItem[] = [];
      for (const text of texts) {
        const item = itemLine(parsedOrNothing(text));
        if (!item) throw new NotHeld(`a selection of workflow ${processId} no longer verifies`);
        if (!changed?.has(item.v.id) && (!keep || keep.has(item.v.id))) items.push(item.v);
      }
      const results = drop ? items.filter((i) => !drop.has(i.id)) : items;
      if (results.length < items.length) {
        this.partial.add(processId);
        for (const i of items) if (drop?.has(i.id)) served.dropped.push(i);
      }
      if (!ranked) for (const i of results) this.listedIn.set(i.id, processId);
      const last = n === ref.pages.length - 1;
      const next = !last || (ranked && !ref.complete) ? "(more)" : null;
      yield { count: changed ? found.count : page.count, next, previous: null, results };
    }
    if (ranked && !ref.complete) throw new NotHeld(`a list of workflow ${processId} was read only in part`);
  }

  /** The held record of an instance read with these options, and the file that holds it. */
  heldRecord(id: number, flags: string): { ref: RecordRef; index: StateIndex } | undefined {
    const { current, usable, older } = this.src;
    const mine = current?.records.get(`${id}:${flags}`);
    // our own write's answer needs a listing of its own to be used: not here
    if (current && mine && mine.written === null && usable(mine.process_id)) return { ref: mine, index: current };
    if (!older) return undefined;
    const old = older.index.records.get(`${id}:${flags}`);
    if (!old || old.written !== null || older.changed(old.process_id)?.has(id) !== false) return undefined;
    return { ref: old, index: older.index };
  }

  /** The line of a held field value, and the file that holds it. */
  heldValue(processId: number, field: string, id: number): { line: number; index: StateIndex } | undefined {
    const { current, usable, older } = this.src;
    const mine = current && usable(processId) ? current.fields.get(`${processId}:${field}`)?.get(id) : undefined;
    if (current && mine !== undefined) return { line: mine, index: current };
    if (!older || older.changed(processId)?.has(id) !== false) return undefined;
    const old = older.index.fields.get(`${processId}:${field}`)?.get(id);
    return old === undefined ? undefined : { line: old, index: older.index };
  }

  override async getInstance(
    id: number,
    opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {},
  ): Promise<InstanceRecord> {
    const flags = flagsOf(opts);
    const listed = this.listedIn.get(id);
    if (listed !== undefined) this.note(this.asked.records, listed, flags);
    const held = this.heldRecord(id, flags);
    if (!held) {
      this.missed = true;
      throw new NotHeld(`instance ${id} was not read before the cut`);
    }
    const record = await recordOf(held.index, held.ref);
    if (!record) throw new NotHeld(`instance ${id} no longer verifies in the state`);
    return record;
  }

  override async *formFieldPages(
    processId: number,
    stepId: number,
    actionId: number,
    query: FormFieldQuery = {},
  ): AsyncGenerator<Page<FormFieldValue>> {
    const ids = idsOnly(query);
    if (!ids) throw new NotHeld(`values of a field of workflow ${processId} were not read before the cut`);
    this.note(this.asked.fields, processId, `${stepId}:${actionId}`);
    const held: Array<{ line: number; index: StateIndex }> = [];
    for (const id of ids) {
      const h = this.heldValue(processId, `${stepId}:${actionId}`, id);
      if (h === undefined) {
        this.missed = true;
        throw new NotHeld(`values of a field of workflow ${processId} were not read before the cut`);
      }
      held.push(h);
    }
    const results: FormFieldValue[] = [];
    for (let i = 0; i < held.length; i += BATCH) {
      const slice = held.slice(i, i + BATCH);
      for (const index of new Set(slice.map((h) => h.index))) {
        const at = slice.flatMap((h, k) => (h.index === index ? [k] : []));
        const texts = await index.lines(at.map((k) => (slice[k] as { line: number }).line));
        texts.forEach((text, j) => {
          const v = valueLine(parsedOrNothing(text));
          if (!v || v.id !== ids[i + (at[j] as number)])
            throw new NotHeld(`a field value of workflow ${processId} no longer verifies`);
          if (v.v !== null) results.push(v.v);
        });
      }
    }
    yield { count: results.length, next: null, previous: null, results };
  }

  override completeStep(): Promise<InstanceRecord> {
    return Promise.reject(new NotHeld("a partial plan sends nothing"));
  }

  override bulkAbort(): Promise<{ ids: number[] }> {
    return Promise.reject(new NotHeld("a partial plan sends nothing"));
  }

  override unusable(): undefined {
    return undefined;
  }

  override close(): Promise<void> {
    return Promise.resolve(); // the live client is closed by its owner
  }
}

/** A held record read again from its file and checked; undefined when its line no longer fits. */
export async function recordOf(index: StateIndex, ref: RecordRef): Promise<InstanceRecord | undefined> {
  const [text = ""] = await index.lines([ref.line]);
  const raw = parsedOrNothing(text);
  const parsed = RecordEntrySchema.safeParse(isRecord(raw) ? raw.record : undefined);
  return parsed.success && parsed.data.compact.record.id === ref.id
    ? expandRecord(parsed.data.compact, index.skeletons)
    : undefined;
}

/** The held listing of a question, as `listingKey` names it. */
export { listingKey, HeldMemo };
