/**
 * A partial plan's answers (docs/operating.md, "A partial plan"): when --max-duration cuts a sync, the rules it cut
 * are planned again from what the state's last checkpoint holds, through this client, which never asks the service.
 *
 * What is sound: everything it answers was read or shown unchanged by the run that wrote the checkpoint, so it is the
 * service's data as of that run (a workflow whose answers are older, carried from an earlier run's look, is not
 * answered at all). A listing the sync did not finish ends where it was cut, and an instance whose data the rules read
 * is not all held (a record, a field value) is left out of every listing, for every rule alike: each rule is planned
 * over part of its selection, never with made-up data, and a conflict between two rules on one instance is seen as in
 * a complete plan. The workflows where a listing ended early or an instance was left out are named (`partial`), so a
 * rule over another workflow is known to be complete. Anything else it does not hold fails the rule that asked.
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
import { canonicalQuery } from "./bounds.js";
import { expandRecord } from "./compact.js";
import type { StateIndex } from "./reader.js";
import { RecordEntrySchema, itemLine, valueLine } from "./schema.js";
import { flagsOf, idsOnly, parsedOrNothing } from "./run.js";

/** An answer the state does not hold: the rule that asked for it is not planned from the state. */
export class NotHeld extends Error {}

/** What the live run answered that a state file does not keep: the workflows, and selections that were empty. */
export class HeldMemo extends DelegatingClient {
  workflows: Workflow[] | undefined;
  readonly empty = new Set<string>();

  constructor(inner: ApiClient) {
    super(inner);
  }

  override async listWorkflows(): Promise<Workflow[]> {
    const all = await this.inner.listWorkflows();
    this.workflows = all;
    return all;
  }

  override async *instancePages(
    processId: number,
    query: InstanceListQuery = {},
  ): AsyncGenerator<Page<InstanceListItem>> {
    let pages = 0;
    let empty = true;
    for await (const page of this.inner.instancePages(processId, query)) {
      pages++;
      if (page.results.length > 0 || page.next !== null) empty = false;
      yield page;
    }
    // a selection answered empty in full (the state may answer one without writing it)
    if (pages === 1 && empty) this.empty.add(listingKey(processId, query));
  }

  override async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }
}

function listingKey(processId: number, query: InstanceListQuery): string {
  return `${processId}:${JSON.stringify(canonicalQuery(query))}`;
}

/** What a planning pass through a HeldClient asked for, per workflow: the kinds of data its rules read. */
export interface Asked {
  /** record read options ("v", "vt", …) */
  records: Map<number, Set<string>>;
  /** fields, as "step:action" */
  fields: Map<number, Set<string>>;
}

const BATCH = 2_000;

export class HeldClient extends DelegatingClient {
  /** workflows where a listing ended where the sync was cut, or an instance was left out */
  readonly partial = new Set<number>();
  /** an answer was asked for that is not held: the next pass leaves out more instances */
  missed = false;
  readonly asked: Asked = { records: new Map(), fields: new Map() };
  /** instances listed so far, with their workflow */
  private readonly listedIn = new Map<number, number>();

  /**
   * @param usable whether the state's answers of a workflow are as of the run that wrote it
   * @param drop instances left out of every listing (some data the rules read of them is not held)
   */
  constructor(
    live: ApiClient,
    private readonly index: StateIndex,
    private readonly memo: HeldMemo,
    private readonly usable: (processId: number) => boolean,
    private readonly drop: ReadonlySet<number>,
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

  override async *instancePages(
    processId: number,
    query: InstanceListQuery = {},
  ): AsyncGenerator<Page<InstanceListItem>> {
    const key = listingKey(processId, query);
    if (!this.usable(processId)) throw new NotHeld(`workflow ${processId} was not read again before the cut`);
    const ref = this.index.listings.get(key);
    if (!ref) {
      if (this.memo.empty.has(key)) return yield { count: 0, next: null, previous: null, results: [] };
      throw new NotHeld(`a selection of workflow ${processId} was not listed before the cut`);
    }
    // an ordered listing names instances by rank (the structure probe, the oldest first): nothing is left out of it
    const selects = canonicalQuery(query).ordering === undefined;
    for (const [n, page] of ref.pages.entries()) {
      const texts = await this.index.lines(page.lines);
      const items: InstanceListItem[] = [];
      for (const text of texts) {
        const item = itemLine(parsedOrNothing(text));
        if (!item) throw new NotHeld(`a selection of workflow ${processId} no longer verifies`);
        items.push(item.v);
      }
      const results = selects ? items.filter((i) => !this.drop.has(i.id)) : items;
      if (results.length < items.length) this.partial.add(processId);
      if (selects) for (const i of results) this.listedIn.set(i.id, processId);
      const last = n === ref.pages.length - 1;
      yield { count: page.count, next: last ? null : "(more)", previous: null, results };
    }
    // asked past the pages read before the cut: the listing ends here
    if (!ref.complete) this.partial.add(processId);
  }

  override async getInstance(
    id: number,
    opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {},
  ): Promise<InstanceRecord> {
    const flags = flagsOf(opts);
    const listed = this.listedIn.get(id);
    if (listed !== undefined) this.note(this.asked.records, listed, flags);
    const ref = this.index.records.get(`${id}:${flags}`);
    // our own write's answer needs a listing of its own to be used: not here
    if (!ref || ref.written !== null || !this.usable(ref.process_id)) {
      this.missed = true;
      throw new NotHeld(`instance ${id} was not read before the cut`);
    }
    const [text = ""] = await this.index.lines([ref.line]);
    const raw = parsedOrNothing(text);
    const parsed = RecordEntrySchema.safeParse(isRecord(raw) ? raw.record : undefined);
    const record =
      parsed.success && parsed.data.compact.record.id === id
        ? expandRecord(parsed.data.compact, this.index.skeletons)
        : undefined;
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
    if (!ids || !this.usable(processId))
      throw new NotHeld(`values of a field of workflow ${processId} were not read before the cut`);
    this.note(this.asked.fields, processId, `${stepId}:${actionId}`);
    const held = this.index.fields.get(`${processId}:${stepId}:${actionId}`);
    const lines: number[] = [];
    for (const id of ids) {
      const line = held?.get(id);
      if (line === undefined) {
        this.missed = true;
        throw new NotHeld(`values of a field of workflow ${processId} were not read before the cut`);
      }
      lines.push(line);
    }
    const results: FormFieldValue[] = [];
    for (let i = 0; i < lines.length; i += BATCH) {
      const texts = await this.index.lines(lines.slice(i, i + BATCH));
      texts.forEach((text, k) => {
        const v = valueLine(parsedOrNothing(text));
        if (!v || v.id !== ids[i + k]) throw new NotHeld(`a field value of workflow ${processId} no longer verifies`);
        if (v.v !== null) results.push(v.v);
      });
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

/**
 * The instances to leave out for the next pass: of each workflow, those listed in the state whose data of a kind the
 * rules asked for (a record read with these options, a field's value) the state does not hold.
 */
export async function lacking(index: StateIndex, asked: Asked, drop: Set<number>): Promise<void> {
  const pids = new Set([...asked.records.keys(), ...asked.fields.keys()]);
  for (const ref of index.listings.values()) {
    if (!pids.has(ref.process_id)) continue;
    const flags = [...(asked.records.get(ref.process_id) ?? [])];
    const fields = [...(asked.fields.get(ref.process_id) ?? [])].map(
      (f) => index.fields.get(`${ref.process_id}:${f}`) ?? new Map<number, number>(),
    );
    const lines = ref.pages.flatMap((p) => [...p.lines]);
    for (let i = 0; i < lines.length; i += BATCH) {
      for (const text of await index.lines(lines.slice(i, i + BATCH))) {
        const item = itemLine(parsedOrNothing(text));
        if (!item) continue;
        const id = item.v.id;
        const held =
          flags.every((f) => {
            const r = index.records.get(`${id}:${f}`);
            return r !== undefined && r.written === null;
          }) && fields.every((m) => m.has(id));
        if (!held) drop.add(id);
      }
    }
  }
}

/** The service's count of a selection the state holds a listing of, asked as `query`; null when it holds none. */
export function heldCount(index: StateIndex, processId: number, query: InstanceListQuery): number | null {
  return index.listings.get(listingKey(processId, query))?.pages[0]?.count ?? null;
}
