/**
 * The state room's face to the engine: an ApiClient that answers what the last run learned when it still holds, and
 * asks the service only for what may have changed (docs/operating.md, State between runs). It sits beside the planner as an informer's
 * cache sits beside a controller: the planner calls the same methods and gets the same answers a stateless run gets
 * at the same moment, so it stays a pure function of (rules, instances, now).
 *
 * What holds (docs/operating.md, "State between runs"): an instance's attributes, record and field values change only
 * with its last_updated_time. So per workflow one list of the instances updated since the bookmark (less a lookback
 * for clock skew and late commits) names everything that changed; a cached answer about any other instance stands,
 * except where a time bound of the question moved with the clock (bounds.ts lists just the slice it swept).
 * Anything it cannot reason about is asked again and remembered for next time.
 */
import { createHash } from "node:crypto";
import type { ApiClient, FormFieldQuery, FormFieldValue, InstanceListItem, InstanceListQuery, InstanceRecord, Page, Workflow } from "../api/index.js";
import { canonicalJson } from "../plan/digest.js";
import { isRecord } from "../model/guards.js";
import { canonicalQuery, changedQuery, movement, shapeKey, sliceable, slices, type CanonicalQuery } from "./bounds.js";
import { compactRecord, expandRecord } from "./compact.js";
import { STATE_FORMAT, STATE_FORMAT_VERSION, type FieldEntry, type Listing, type KeptRecord, lineBytes, settingsSharer, type RecordEntry, RecordEntrySchema, type StateData, type WorkflowMark } from "./schema.js";

/** How a request was decided, in the shape of the engine's request choices (`--explain-requests`). */
export interface StateChoice {
  subject: string;
  workflow_id: number;
  choice: string;
  requests: number;
  why: string;
}

export interface StateClientOptions {
  /** the run's `now` (relative bounds were resolved against it); the next run's bookmark */
  now: Date;
  baseUrl: string;
  version: string;
  previous: StateData | undefined;
  /** read everything again (--full-refresh) */
  fullRefresh: boolean;
  /** a workflow last read in full longer ago than this is read in full again */
  resyncAfterMs: number;
  /** changes are listed from the bookmark less this (clock skew between us and the service, late commits) */
  lookbackMs: number;
  /** workflows read in full this run (their rules changed), by id or by name */
  coldWorkflows: { ids: ReadonlySet<number>; names: ReadonlySet<string> };
  /** rule name → digest, written into the new state */
  ruleDigests: Record<string, string>;
  warn(message: string): void;
  explain?(c: StateChoice): void;
}

export interface StateCounts {
  /** distinct instances answered from the state and not read again */
  fromState: number;
  /** distinct instances read again from the service (listed as changed or entering, records, field values) */
  readAgain: number;
}

interface RunWorkflow {
  pid: number;
  cold: boolean;
  mark: WorkflowMark | undefined;
  changed?: Promise<ReadonlySet<number>>;
  structure: string | null;
  newestSeen: number | null;
}

const iso = (t: number): string => new Date(t).toISOString();

function flagsOf(opts: { injectValues?: boolean; stepsTimeFrame?: boolean }): string {
  return `${opts.injectValues ? "v" : ""}${opts.stepsTimeFrame ? "t" : ""}`;
}

/** The workflow id in a record's `process` URI ({base_url}/processes/<id>/). */
function processOf(record: InstanceRecord): number | undefined {
  const m = typeof record.process === "string" ? /\/processes\/(\d+)\/?$/.exec(record.process) : null;
  return m ? Number(m[1]) : undefined;
}

/** Steps and fields with their types and settings: what a rule's meaning depends on, no instance's values. */
export function structureDigest(snapshot: unknown): string | null {
  if (!isRecord(snapshot) || !Array.isArray(snapshot.steps)) return null;
  const steps = snapshot.steps.filter(isRecord).map((s) => ({
    id: s.id,
    name: s.name,
    position: s.position,
    type: s.type,
    actions: Array.isArray(s.actions) ? s.actions.filter(isRecord).map((a) => ({ id: a.id, name: a.name, type: a.type, settings: a.settings })) : [],
  }));
  return createHash("sha256").update(canonicalJson({ name: snapshot.name, steps })).digest("hex").slice(0, 32);
}

function idsOf(v: FormFieldQuery[string]): number[] | undefined {
  if (Array.isArray(v)) return v.map(Number);
  if (typeof v === "string") return v.split(",").filter((s) => s.trim() !== "").map(Number);
  if (typeof v === "number") return [v];
  return undefined;
}

export class StateClient implements ApiClient {
  readonly baseUrl: string;
  private readonly nowMs: number;
  private readonly nowIso: string;
  private readonly workflows = new Map<number, RunWorkflow>();
  private readonly oldListings = new Map<string, Listing[]>();
  private readonly oldRecords = new Map<string, KeptRecord>();
  private readonly oldSkeletons = new Map<string, unknown>();
  private readonly newSkeletons = new Map<string, unknown>();
  private readonly oldFields = new Map<string, Map<number, FormFieldValue | null>>();
  private readonly newListings = new Map<string, Listing>();
  private readonly newRecords = new Map<string, KeptRecord>();
  private readonly newFields = new Map<string, { process_id: number; step: number; action: number; values: Map<number, FormFieldValue | null> }>();
  /** instances named by an ordered listing (the structure probe): their records are always read */
  private readonly probes = new Set<number>();
  private readonly fromState = new Set<number>();
  private readonly readAgain = new Set<number>();
  private readonly coldIds: Set<number>;
  private warnedResync = false;
  private readonly shareSettings = settingsSharer();

  constructor(private readonly inner: ApiClient, private readonly opts: StateClientOptions) {
    this.baseUrl = inner.baseUrl;
    this.nowMs = opts.now.getTime();
    this.nowIso = opts.now.toISOString();
    this.coldIds = new Set(opts.coldWorkflows.ids);
    const prev = opts.fullRefresh ? undefined : opts.previous;
    for (const l of prev?.listings ?? []) {
      const key = shapeKey(l.process_id, l.query);
      const same = this.oldListings.get(key);
      if (same) same.push(l);
      else this.oldListings.set(key, [l]);
    }
    for (const r of prev?.records ?? []) this.oldRecords.set(`${r.id}:${r.flags}`, r);
    for (const [k, v] of prev?.skeletons ?? []) this.oldSkeletons.set(k, v);
    for (const f of prev?.fields ?? []) {
      const values = new Map<number, FormFieldValue | null>();
      for (const [id, value] of f.values) values.set(id, value);
      f.values.length = 0; // the [id, value] pairs, released once indexed
      this.oldFields.set(`${f.process_id}:${f.step}:${f.action}`, values);
    }
    // the previous state's arrays are released once indexed (its header stays: bookmarks are read from it); the
    // caller's `previous` is emptied with them, so nothing else keeps them alive to the end of the run
    if (opts.previous) {
      opts.previous.listings = [];
      opts.previous.records = [];
      opts.previous.fields = [];
      opts.previous.skeletons = new Map();
    }
  }

  // ---- bookkeeping ------------------------------------------------------------------------------------------------

  private workflow(pid: number): RunWorkflow {
    let w = this.workflows.get(pid);
    if (w) return w;
    const prev = this.opts.fullRefresh ? undefined : this.opts.previous;
    const mark = prev?.header.workflows[String(pid)];
    let cold = !mark || this.coldIds.has(pid);
    if (mark && !cold && this.nowMs - Date.parse(mark.synced_at) > this.opts.resyncAfterMs) {
      cold = true;
      if (!this.warnedResync) {
        this.warnedResync = true;
        this.opts.warn(`state: last read in full at ${mark.synced_at}, longer ago than --resync-after: workflows read that long ago are read in full again`);
      }
    }
    if (mark && !cold && Date.parse(mark.run_at) > this.nowMs) cold = true; // the clock went back: nothing to reason from
    w = { pid, cold, mark, structure: mark?.structure ?? null, newestSeen: mark?.newest_seen ? Date.parse(mark.newest_seen) : null };
    this.workflows.set(pid, w);
    return w;
  }

  /** Ids of the workflow's instances updated since the bookmark (less the lookback): one listing per run. */
  private changedIds(w: RunWorkflow): Promise<ReadonlySet<number>> {
    w.changed ??= (async () => {
      const since = Date.parse((w.mark as WorkflowMark).run_at) - this.opts.lookbackMs;
      const ids = new Set<number>();
      let pages = 0;
      for await (const page of this.inner.instancePages(w.pid, { last_updated_time_after: iso(since) })) {
        pages++;
        for (const i of page.results) ids.add(i.id);
      }
      this.opts.explain?.({
        subject: "changes since the last run",
        workflow_id: w.pid,
        choice: "list",
        requests: pages,
        why: `${ids.size} instance${ids.size === 1 ? "" : "s"} updated since ${iso(since)} (the last run, less ${Math.round(this.opts.lookbackMs / 1000)} s for clock skew)`,
      });
      return ids;
    })();
    return w.changed;
  }

  private saw(ids: Iterable<number>, fresh: boolean): void {
    for (const id of ids) (fresh ? this.readAgain : this.fromState).add(id);
  }

  counts(): StateCounts {
    let fromState = 0;
    for (const id of this.fromState) if (!this.readAgain.has(id)) fromState++;
    return { fromState, readAgain: this.readAgain.size };
  }

  /** The new state: what this run used or read, each entry still true at the run's `now`. */
  snapshot(): StateData {
    const workflows: Record<string, WorkflowMark> = {};
    for (const w of this.workflows.values()) {
      workflows[String(w.pid)] = {
        run_at: this.nowIso,
        newest_seen: w.newestSeen === null ? null : iso(w.newestSeen),
        synced_at: w.cold || !w.mark ? this.nowIso : w.mark.synced_at,
        structure: w.structure,
      };
    }
    const records = [...this.newRecords.values()].filter((r) => workflows[String(r.process_id)]);
    const skeletons = new Map<string, unknown>();
    for (const r of records) {
      const key = r.skeleton;
      if (key !== null && !skeletons.has(key)) skeletons.set(key, this.newSkeletons.get(key) ?? this.oldSkeletons.get(key));
    }
    return {
      header: {
        format: STATE_FORMAT,
        format_version: STATE_FORMAT_VERSION,
        flowrules_version: this.opts.version,
        base_url: this.baseUrl,
        written_at: new Date().toISOString(),
        run_at: this.nowIso,
        rules: this.opts.ruleDigests,
        workflows,
      },
      skeletons,
      records,
      listings: [...this.newListings.values()].filter((l) => workflows[String(l.process_id)]),
      fields: [...this.newFields.values()]
        .filter((f) => workflows[String(f.process_id)])
        .map((f): FieldEntry => ({ process_id: f.process_id, step: f.step, action: f.action, values: [...f.values] })),
    };
  }

  private remember(listing: Listing): void {
    this.newListings.set(`${listing.process_id}:${JSON.stringify(listing.query)}`, listing);
  }

  // ---- endpoints --------------------------------------------------------------------------------------------------

  async listWorkflows(): Promise<Workflow[]> {
    const list = await this.inner.listWorkflows();
    // rules naming their workflow: a changed one makes that workflow cold
    for (const w of list) if (this.opts.coldWorkflows.names.has(w.name) && !this.workflows.has(w.id)) this.coldIds.add(w.id);
    return list;
  }

  async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }

  async *instancePages(processId: number, query: InstanceListQuery = {}): AsyncGenerator<Page<InstanceListItem>> {
    const q = canonicalQuery(query);
    const w = this.workflow(processId);
    if (w.cold) return yield* this.passThrough(processId, q, query);
    let found: { listing: Listing; moved: ReturnType<typeof movement>["moved"] } | undefined;
    for (const cand of this.oldListings.get(shapeKey(processId, q)) ?? []) {
      const mv = movement(cand.query, Date.parse(cand.run_at), q, this.nowMs);
      if (mv.ok) {
        found = { listing: cand, moved: mv.moved };
        break;
      }
    }
    if (!found) return yield* this.passThrough(processId, q, query);
    const changed = await this.changedIds(w);
    const { listing, moved } = found;
    if (!sliceable(q) || !listing.complete) {
      // a running instance's run time grows with the clock, with no update: such a question is asked again
      const drifts = (q.total_runtime_min !== undefined || q.total_runtime_max !== undefined) && Date.parse(listing.run_at) !== this.nowMs;
      if (changed.size > 0 || moved.length > 0 || drifts) return yield* this.passThrough(processId, q, query);
      return yield* this.replay(processId, q, query, listing);
    }
    const plan = slices(listing.query, q, moved);
    if (!plan) return yield* this.passThrough(processId, q, query);

    const members = new Map<number, InstanceListItem>();
    for (const page of listing.pages) for (const item of page.results) if (!changed.has(item.id)) members.set(item.id, item);
    const fromCache = members.size;
    let requests = 0;
    const list = async (slice: CanonicalQuery): Promise<InstanceListItem[]> => {
      const out: InstanceListItem[] = [];
      for await (const page of this.inner.instancePages(processId, slice)) {
        requests++;
        out.push(...page.results);
      }
      return out;
    };
    for (const s of plan.filter((p) => p.effect === "leave")) for (const item of await list(s.query)) members.delete(item.id);
    const fresh: InstanceListItem[] = [];
    for (const s of plan.filter((p) => p.effect === "enter")) fresh.push(...(await list(s.query)));
    if (changed.size > 0) fresh.push(...(await list(changedQuery(q, Date.parse((w.mark as WorkflowMark).run_at) - this.opts.lookbackMs))));
    for (const item of fresh) members.set(item.id, item);
    const results = [...members.values()].sort((a, b) => a.id - b.id);
    this.saw(results.map((i) => i.id), false);
    this.saw(fresh.map((i) => i.id), true);
    this.opts.explain?.({
      subject: `selection ${JSON.stringify(q)}`,
      workflow_id: processId,
      choice: "state",
      requests,
      why: `${fromCache} from the state${plan.length ? `; ${plan.map((p) => p.why).join("; ")}` : ""}; ${changed.size > 0 ? "changed instances listed again" : "none changed"}`,
    });
    this.remember({ process_id: processId, query: q, run_at: this.nowIso, complete: true, pages: [{ count: results.length, results }] });
    yield { count: results.length, next: null, previous: null, results };
  }

  /** Asks the service, and remembers the pages read (complete once one says there is no next). */
  private async *passThrough(processId: number, q: CanonicalQuery, query: InstanceListQuery): AsyncGenerator<Page<InstanceListItem>> {
    const listing: Listing = { process_id: processId, query: q, run_at: this.nowIso, complete: false, pages: [] };
    try {
      for await (const page of this.inner.instancePages(processId, query)) {
        listing.pages.push({ count: page.count, results: page.results });
        listing.complete = page.next === null;
        if (q.ordering !== undefined) for (const i of page.results) this.probes.add(i.id);
        this.saw(page.results.map((i) => i.id), true);
        yield page;
      }
      listing.complete = true;
    } finally {
      this.remember(listing);
    }
  }

  /** A cached answer that still holds (nothing changed, no bound moved); beyond its pages, the service again. */
  private async *replay(processId: number, q: CanonicalQuery, query: InstanceListQuery, cached: Listing): AsyncGenerator<Page<InstanceListItem>> {
    this.remember({ ...cached, query: q, run_at: this.nowIso });
    for (const [n, page] of cached.pages.entries()) {
      if (q.ordering !== undefined) for (const i of page.results) this.probes.add(i.id);
      this.saw(page.results.map((i) => i.id), false);
      const last = n === cached.pages.length - 1;
      yield { count: page.count, next: last && cached.complete ? null : "(more)", previous: null, results: page.results };
    }
    if (cached.complete) return;
    // the caller wants more than the last run read: the same question, from its next page on
    let skip = cached.pages.length;
    for await (const page of this.inner.instancePages(processId, query)) {
      if (skip-- > 0) continue;
      this.saw(page.results.map((i) => i.id), true);
      yield page;
    }
  }

  /** A kept record, checked in full now; undefined (read it again) when its line does not fit. */
  private keptRecord(kept: KeptRecord): InstanceRecord | undefined {
    let raw: unknown;
    try {
      raw = JSON.parse(kept.line.toString("utf8"));
    } catch {
      return undefined;
    }
    const parsed = RecordEntrySchema.safeParse(isRecord(raw) ? raw.record : undefined);
    if (!parsed.success || parsed.data.compact.record.id !== kept.id) return undefined;
    return expandRecord(parsed.data.compact, this.oldSkeletons);
  }

  async getInstance(id: number, opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {}): Promise<InstanceRecord> {
    const key = `${id}:${flagsOf(opts)}`;
    const cached = this.oldRecords.get(key);
    // the structure probe too: the newest instance's snapshot changes only with it (or a newer one starts), both
    // listed as changed, and a fresh read of it is checked against the structure digest below
    if (cached) {
      const w = this.workflow(cached.process_id);
      const record = w.cold ? undefined : this.keptRecord(cached);
      if (record && !(await this.changedIds(w)).has(id) && !w.cold) {
        this.newRecords.set(key, cached);
        this.saw([id], false);
        return record;
      }
    }
    const record = await this.inner.getInstance(id, opts);
    this.saw([id], true);
    const pid = processOf(record);
    if (pid === undefined) return record;
    const w = this.workflow(pid);
    const updated = typeof record.last_updated_time === "string" ? Date.parse(record.last_updated_time) : NaN;
    if (!Number.isNaN(updated) && (w.newestSeen === null || updated > w.newestSeen)) w.newestSeen = updated;
    if (this.probes.has(id) && opts.injectValues) {
      const digest = structureDigest(record.process_snapshot);
      if (digest !== null) {
        if (w.structure !== null && w.structure !== digest && !w.cold) {
          w.cold = true;
          this.opts.warn(`state: the structure of workflow ${pid} changed since the last run: it is read in full`);
        }
        w.structure = digest;
      }
    }
    const entry: RecordEntry = { process_id: pid, flags: flagsOf(opts), compact: compactRecord(record, this.newSkeletons) };
    this.newRecords.set(key, { process_id: pid, flags: entry.flags, id, skeleton: entry.compact.skeleton, line: lineBytes(JSON.stringify({ record: entry })) });
    return record;
  }

  async *formFieldPages(processId: number, stepId: number, actionId: number, query: FormFieldQuery = {}): AsyncGenerator<Page<FormFieldValue>> {
    const ids = idsOf(query.instance_ids);
    const other = Object.keys(query).filter((k) => k !== "instance_ids" && k !== "limit" && query[k] !== undefined);
    if (!ids || other.length > 0 || ids.some((n) => !Number.isSafeInteger(n))) return yield* this.inner.formFieldPages(processId, stepId, actionId, query);
    const w = this.workflow(processId);
    const key = `${processId}:${stepId}:${actionId}`;
    const old = w.cold ? undefined : this.oldFields.get(key);
    const changed = old ? await this.changedIds(w) : new Set<number>();
    let entry = this.newFields.get(key);
    if (!entry) {
      entry = { process_id: processId, step: stepId, action: actionId, values: new Map() };
      this.newFields.set(key, entry);
    }
    const results: FormFieldValue[] = [];
    const missing: number[] = [];
    for (const id of ids) {
      const hit = old && !changed.has(id) ? old.get(id) : undefined;
      if (hit === undefined) missing.push(id);
      else {
        entry.values.set(id, hit);
        if (hit !== null) results.push(hit);
      }
    }
    const missed = new Set(missing);
    this.saw(ids.filter((id) => !missed.has(id)), false);
    if (missing.length > 0) {
      const found = new Map<number, FormFieldValue>();
      for await (const page of this.inner.formFieldPages(processId, stepId, actionId, { ...query, instance_ids: missing })) {
        for (const r of page.results) found.set(r.instance_id, r);
      }
      for (const r of found.values()) this.shareSettings(r);
      for (const id of missing) entry.values.set(id, found.get(id) ?? null);
      for (const r of found.values()) if (missed.has(r.instance_id)) results.push(r);
      this.saw(missing, true);
    }
    yield { count: results.length, next: null, previous: null, results };
  }

  completeStep(...args: Parameters<ApiClient["completeStep"]>): ReturnType<ApiClient["completeStep"]> {
    return this.inner.completeStep(...args);
  }

  bulkAbort(ids: number[]): Promise<{ ids: number[] }> {
    return this.inner.bulkAbort(ids);
  }

  stats(): ReturnType<ApiClient["stats"]> {
    return this.inner.stats();
  }

  unusable(): ReturnType<ApiClient["unusable"]> {
    return this.inner.unusable();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
