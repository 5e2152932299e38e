/**
 * The state room's face to the engine: an ApiClient that answers what the last run learned when it still holds, and
 * asks the service only for what may have changed (docs/operating.md, State between runs). It sits beside the planner as an informer's
 * cache sits beside a controller: the planner calls the same methods and gets the same answers a stateless run gets
 * at the same moment, so it stays a pure function of (rules, instances, now).
 *
 * What it keeps is the service's data keyed by what was asked (docs/operating.md, "State between runs"), never by the rules that
 * asked: listings by query, records by instance and read options, field values by (instance, step, field). So a rule
 * edit changes only what is asked: a new question is asked, an old answer still serves.
 *
 * What holds (docs/operating.md, "State between runs"): an instance's attributes, record and field values change only
 * with its last_updated_time. So per workflow one list of the instances updated since the last run looked (by the
 * service's clock, less a margin for late commits) names everything that changed; a cached answer about any other
 * instance stands, except where a time bound of the question moved with the clock (bounds.ts lists just the slice
 * it swept). Anything it cannot reason about is asked again and remembered for next time.
 *
 * Write-through: the answers of our own complete_step/save_step (the updated record) and bulk aborts (the ids) are
 * written into the next state. Such a record is used only after a listing shows the instance's last_updated_time
 * still exactly the one it holds, so a change by someone else right after our write is never hidden by it.
 */
import { createHash } from "node:crypto";
import { DelegatingClient, type ApiClient, type CompleteStepBody, FormFieldQuery, FormFieldValue, InstanceListItem, InstanceListQuery, InstanceRecord, Page, ServiceClock, Workflow } from "../api/index.js";
import { canonicalJson } from "../plan/digest.js";
import { isRecord } from "../model/guards.js";
import { plural } from "../text/plural.js";
import { canonicalQuery, changedQuery, emptyRange, movement, shapeKey, sliceable, slices, updatedAfter, type CanonicalQuery } from "./bounds.js";
import { compactRecord, expandRecord } from "./compact.js";
import type { ListingRef, RecordRef, StateIndex } from "./reader.js";
import { itemLine, settingsSharer, valueLine, type Marks, type RecordEntry, RecordEntrySchema, type WorkflowMark } from "./schema.js";
import { writtenFlags } from "./written.js";
import { censusWentBack, censusWorkflow, clockWentBack, newestWentBack, type Census } from "./went-back.js";
import type { StateWriter } from "./writer.js";

/** A listing as a run uses it: the question, when it was asked, and its pages. */
interface Listing {
  process_id: number;
  query: CanonicalQuery;
  run_at: string;
  complete: boolean;
  pages: Array<{ count: number | null; results: InstanceListItem[] }>;
}

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
  /** the last run's state, indexed on disk (undefined: none that can be used) */
  previous: StateIndex | undefined;
  /** the next state file, written as the run goes */
  writer: StateWriter;
  /** read everything again (--full-refresh) */
  fullRefresh: boolean;
  /** a workflow last read in full longer ago than this is read in full again */
  resyncAfterMs: number;
  /** changes are listed from when the last run looked, by the service's clock, less this (late commits) */
  marginMs: number;
  /** without the service's clock (an answer carried no Date): from the last run's now, by ours, less this (skew too) */
  lookbackMs: number;
  warn(message: string): void;
  explain?(c: StateChoice): void;
}

export interface StateCounts {
  /** distinct instances answered from the state and not read again */
  fromState: number;
  /** distinct instances read again from the service (listed as changed or entering, records, field values) */
  readAgain: number;
}

/** One write of ours this run: the instance, its workflow when the answer names it, its last_updated_time after it. */
export interface OwnWrite {
  id: number;
  process_id?: number;
  /** as the service wrote it; absent for a bulk abort (its answer holds only ids) */
  last_updated_time?: string;
}

interface RunWorkflow {
  pid: number;
  /** record reads and field values answered from the state, and asked of the service (requests: record reads, field pages) */
  tally: { recordsKept: number; recordsRead: number; valuesKept: number; valuesAsked: number; fieldPages: number; written: number; windows: number };
  cold: boolean;
  mark: WorkflowMark | undefined;
  changed?: Promise<ReadonlySet<number>>;
  structure: string | null;
  newestSeen: number | null;
}

const iso = (t: number): string => new Date(t).toISOString();
/** A line of the previous state as JSON; undefined when it is not JSON (the caller then asks the service). */
function parsedOrNothing(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** "N things" as every message says it (src/text/plural.ts) */
const count = plural;

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

export class StateClient extends DelegatingClient {
  private readonly nowMs: number;
  private readonly nowIso: string;
  private readonly workflows = new Map<number, RunWorkflow>();
  /** the previous state (none with --full-refresh): its lines are read as they are used */
  private readonly prev: StateIndex | undefined;
  /** the previous run's listings by the shape of their question (bounds.ts shapeKey) */
  private readonly oldListings = new Map<string, ListingRef[]>();
  /** written-through records of the previous state by `workflow|last_updated_time`: how many share that instant */
  private readonly writtenAt = new Map<string, number>();
  /** per `workflow|last_updated_time`: the instances whose last_updated_time is exactly that now (one listing) */
  private readonly unchangedAt = new Map<string, Promise<ReadonlySet<number>>>();
  private readonly newSkeletons = new Map<string, unknown>();
  private readonly skeletonsWritten = new Set<string>();
  private readonly recordsWritten = new Set<string>();
  /** instances named by an ordered listing (the structure probe): their records are always read */
  private readonly probes = new Set<number>();
  private readonly fromState = new Set<number>();
  private readonly readAgain = new Set<number>();
  private readonly own: OwnWrite[] = [];
  /** the service's clock when this client began (its look is bounded by what the clock says after) */
  private readonly clockAtStart: ServiceClock | undefined;
  /** planning asked through this client (else a commit carries the previous state forward: `apply plan.json`) */
  private planned = false;
  private warnedResync = false;
  /** whether the service went back since the last run (went-back.ts), asked once before anything is answered */
  private back: Promise<void> | undefined;
  /** why it went back: then nothing of the previous state is used */
  private wentBack: string | undefined;
  /** this run's counts of workflows (went-back.ts), for the next run */
  private readonly censuses = new Map<number, Census>();
  /** a count to compare with was asked for (or not needed) this run */
  private baseline = false;
  private readonly shareSettings = settingsSharer();
  private readonly out: StateWriter;

  constructor(inner: ApiClient, private readonly opts: StateClientOptions) {
    super(inner);
    this.nowMs = opts.now.getTime();
    this.nowIso = opts.now.toISOString();
    this.out = opts.writer;
    this.prev = opts.fullRefresh ? undefined : opts.previous;
    this.clockAtStart = inner.serviceClock?.();
    for (const l of this.prev?.listings.values() ?? []) {
      const key = shapeKey(l.process_id, l.query);
      const same = this.oldListings.get(key);
      if (same) same.push(l);
      else this.oldListings.set(key, [l]);
    }
    for (const r of this.prev?.records.values() ?? []) {
      if (r.written === null) continue;
      const key = `${r.process_id}|${r.written}`;
      this.writtenAt.set(key, (this.writtenAt.get(key) ?? 0) + 1);
    }
  }

  // ---- bookkeeping ------------------------------------------------------------------------------------------------

  private workflow(pid: number): RunWorkflow {
    this.planned = true;
    let w = this.workflows.get(pid);
    if (w) return w;
    const mark = this.prev?.marks[String(pid)];
    let cold = !mark;
    if (mark && !cold && this.nowMs - Date.parse(mark.synced_at) > this.opts.resyncAfterMs) {
      cold = true;
      if (!this.warnedResync) {
        this.warnedResync = true;
        this.opts.warn(`state: last read in full at ${mark.synced_at}, longer ago than --resync-after: workflows read that long ago are read in full again`);
      }
    }
    if (mark && !cold && Date.parse(mark.run_at) > this.nowMs) cold = true; // the clock went back: nothing to reason from
    if (this.wentBack !== undefined) cold = true;
    w = {
      pid,
      cold,
      mark,
      tally: { recordsKept: 0, recordsRead: 0, valuesKept: 0, valuesAsked: 0, fieldPages: 0, written: 0, windows: 0 },
      structure: mark?.structure ?? null,
      newestSeen: mark?.newest_seen && this.wentBack === undefined ? Date.parse(mark.newest_seen) : null,
    };
    this.workflows.set(pid, w);
    return w;
  }

  /**
   * From when changes are listed: when the last run looked, by the service's clock, less the margin for late commits;
   * without it (an answer of that run carried no Date), the last run's now by our clock less the lookback for skew.
   */
  private since(w: RunWorkflow): { at: number; why: string } {
    const mark = w.mark as WorkflowMark;
    const looked = mark.looked_at ? Date.parse(mark.looked_at) : Number.NaN;
    if (!Number.isNaN(looked)) return { at: looked - this.opts.marginMs, why: `when the last run looked, by the service's clock, less ${Math.round(this.opts.marginMs / 1000)} s for late commits` };
    return { at: Date.parse(mark.run_at) - this.opts.lookbackMs, why: `the last run, by this machine's clock (the service sent no Date), less ${Math.round(this.opts.lookbackMs / 1000)} s for clock skew` };
  }

  /**
   * Whether the service went back since the last run (went-back.ts), decided before anything is answered from the
   * state: one count of one workflow, its clock, and the changes listing of every workflow the last run used (each
   * asked once a run anyway). If it did, every workflow is read afresh, with one warning.
   */
  private checkBack(): Promise<void> {
    this.back ??= (async () => {
      const marks = this.prev?.marks;
      if (!marks) return;
      const pid = censusWorkflow(marks);
      if (pid === undefined) return;
      const census = await this.census(pid);
      const before = marks[String(pid)]?.census;
      const why = clockWentBack(this.inner.serviceClock?.()?.latestMs ?? null, marks, this.opts.marginMs) ?? (before ? censusWentBack(pid, before, census) : undefined);
      if (why !== undefined) return this.goneBack(why);
      const warm = Object.keys(marks).map((key) => this.workflow(Number(key))).filter((w) => !w.cold);
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
  private async ready(pid: number): Promise<void> {
    await this.checkBack();
    if (this.censuses.size > 0 || this.baseline) return;
    this.baseline = true;
    if (this.wentBack === undefined && Object.values(this.prev?.marks ?? {}).some((m) => m.census)) return;
    await this.census(pid);
  }

  /** Nothing of the previous state is used from here on (nothing was answered from it yet): said once. */
  private goneBack(why: string): void {
    this.wentBack = why;
    for (const w of this.workflows.values()) {
      w.cold = true;
      w.newestSeen = null;
    }
    this.opts.warn(`state: the service went back since the last run (${why}), as after a restored backup or a reset: the state is not used, everything is read afresh`);
  }

  /** One listing of one element: the workflow's count and newest started instance, kept for the next run. */
  private async census(pid: number): Promise<Census> {
    let census: Census = { count: null, newest: null };
    for await (const page of this.inner.instancePages(pid, { ordering: "-started_time", page_size: 1 })) {
      census = { count: page.count, newest: page.results[0]?.id ?? null };
      break; // one page of one element
    }
    this.censuses.set(pid, census);
    this.opts.explain?.({ subject: "the service's count", workflow_id: pid, choice: "list", requests: 1, why: `${census.count ?? "an unknown number of"} instances, the newest started ${census.newest ?? "none"}: a service that went back (a restored backup, a reset) is read afresh` });
    return census;
  }

  /** Ids of the workflow's instances updated since the last run looked: one listing per run. */
  private changedIds(w: RunWorkflow): Promise<ReadonlySet<number>> {
    w.changed ??= (async () => {
      const since = this.since(w);
      const ids = new Set<number>();
      let pages = 0;
      for await (const page of this.inner.instancePages(w.pid, { last_updated_time_after: iso(since.at) })) {
        pages++;
        for (const i of page.results) ids.add(i.id);
      }
      let ours = 0;
      for (const id of ids) if (this.prev?.aborted.has(id) || this.prev?.records.get(`${id}:v`)?.written || this.prev?.records.get(`${id}:vt`)?.written) ours++;
      this.opts.explain?.({
        subject: "changes since the last run",
        workflow_id: w.pid,
        choice: "list",
        requests: pages,
        why: `${count(ids.size, "instance")} updated since ${iso(since.at)} (${since.why})${ours > 0 ? `, ${ours} of them by this flowrules' own writes` : ""}`,
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

  /** Our own writes this run (write-through), in the order their answers came. */
  written(): readonly OwnWrite[] {
    return this.own;
  }

  /**
   * Per workflow, what the state answered of the record reads and field values the planner asked for, in the
   * `--explain-requests` shape: the planner's own lines count what it asked for, these what reached the service.
   */
  explainAnswers(): void {
    const explain = this.opts.explain;
    if (!explain) return;
    for (const w of this.workflows.values()) {
      const t = w.tally;
      if (t.recordsKept + t.recordsRead + t.valuesKept + t.valuesAsked + t.written === 0) continue;
      const through = t.written > 0 ? `; ${count(t.written, "record")} of our own writes used (${count(t.windows, "listing")} showed them unchanged since)` : "";
      explain({
        subject: "records and field values",
        workflow_id: w.pid,
        choice: "state",
        requests: t.recordsRead + t.fieldPages + t.windows,
        why: `${count(t.recordsKept, "record read")} and ${count(t.valuesKept, "field value")} answered from the state; ${count(t.recordsRead, "record")} read and ${count(t.valuesAsked, "field value")} asked (${count(t.fieldPages, "field page")})${through}`,
      });
    }
  }

  /**
   * When this run began to look, by the service's clock; null when some answer carried no Date (the next run then
   * falls back to our clock). Every answer this run used or wrote was read at or after it.
   */
  private lookedAt(w: RunWorkflow): string | null {
    const c = this.inner.serviceClock?.();
    const before = this.clockAtStart;
    if (!c || c.earliestMs === null || c.undated > (before?.undated ?? 0)) return null;
    // nothing asked this run (everything answered by the last one's look): that look still bounds it
    if (c.answered === (before?.answered ?? 0)) return w.mark?.looked_at ?? null;
    return iso(c.earliestMs);
  }

  /** The bookmarks of the workflows this run used, for the next run. */
  marks(): Marks {
    const marks: Marks = {};
    for (const w of this.workflows.values()) {
      marks[String(w.pid)] = {
        run_at: this.nowIso,
        looked_at: this.lookedAt(w),
        newest_seen: w.newestSeen === null ? null : iso(w.newestSeen),
        synced_at: w.cold || !w.mark ? this.nowIso : w.mark.synced_at,
        structure: w.structure,
      };
      // the count of this run, else the last one (a count only grows: an older one still bounds it), never one of a
      // service that went back
      const census = this.censuses.get(w.pid) ?? (this.wentBack === undefined ? w.mark?.census : undefined);
      if (census) marks[String(w.pid)] = { ...marks[String(w.pid)] as WorkflowMark, census };
    }
    return marks;
  }

  /**
   * Completes the next state file and puts it in place: call only after a run that read all it needed. With no
   * planning through this client (`apply plan.json --state`), the previous state is carried forward whole, with its
   * bookmarks, and what was written through after it; with no previous state, nothing is written.
   */
  async commit(): Promise<void> {
    if (this.planned) return this.out.commit(this.marks());
    if (!this.prev) return this.out.discard();
    await this.carryForward(this.prev);
    return this.out.commit(this.prev.marks);
  }

  // ---- writing the next state as the run goes -----------------------------------------------------------------------

  /** A listing's elements, page by page, then its head; returns nothing to hold. */
  private writeListing(listing: Listing): void {
    const n = this.out.nextListing();
    listing.pages.forEach((page, p) => this.writeItems(n, p, page.results));
    this.writeListingHead(n, listing, listing.pages.map((page) => ({ count: page.count, size: page.results.length })));
  }

  private writeItems(n: number, p: number, items: readonly InstanceListItem[]): void {
    for (const item of items) this.out.line(`{"item":{"l":${n},"p":${p},"v":${JSON.stringify(item)}}}`);
  }

  private writeListingHead(n: number, l: Pick<Listing, "process_id" | "query" | "run_at" | "complete">, pages: Array<{ count: number | null; size: number }>): void {
    this.out.line(JSON.stringify({ listing: { n, process_id: l.process_id, query: l.query, run_at: l.run_at, complete: l.complete, pages } }));
  }

  private writeRecord(text: string, skeleton: string | null): void {
    if (skeleton !== null && !this.skeletonsWritten.has(skeleton)) {
      this.skeletonsWritten.add(skeleton);
      this.out.line(JSON.stringify({ skeleton: { key: skeleton, snapshot: this.newSkeletons.get(skeleton) ?? this.prev?.skeletons.get(skeleton) } }));
    }
    this.out.line(text);
  }

  /** Everything of the previous state, in batches of lines (`apply plan.json --state`: nothing was planned). */
  private async carryForward(prev: StateIndex): Promise<void> {
    const BATCH = 2_000;
    for (const ref of prev.listings.values()) {
      // a listing one of whose lines no longer verifies is left out whole (the next run asks it again)
      const listing = await this.loadListing(ref);
      if (listing) this.writeListing(listing);
    }
    // a line that no longer verifies comes back as nothing: left out (the next run asks the service for it)
    const copy = async (lines: number[]): Promise<void> => {
      for (let i = 0; i < lines.length; i += BATCH) for (const text of await prev.lines(lines.slice(i, i + BATCH))) if (text !== "") this.out.line(text);
    };
    for (const [key, snapshot] of prev.skeletons) {
      this.skeletonsWritten.add(key);
      this.out.line(JSON.stringify({ skeleton: { key, snapshot } }));
    }
    const own = new Set(this.own.map((o) => o.id));
    // a record we wrote through this run (already written) replaces the one of the last run
    await copy([...prev.records.values()].filter((r) => !this.recordsWritten.has(`${r.id}:${r.flags}`)).map((r) => r.line));
    for (const values of prev.fields.values()) await copy([...values.values()]);
    const aborted = [...prev.aborted].filter((id) => !own.has(id));
    if (aborted.length > 0) this.out.line(JSON.stringify({ aborted: { ids: aborted } }));
  }

  /** A listing of the previous run, read from the file; undefined when a line does not fit (then it is asked again). */
  private async loadListing(ref: ListingRef): Promise<Listing | undefined> {
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

  // ---- write-through ----------------------------------------------------------------------------------------------

  /** The answer of our own complete_step/save_step: the next state keeps it as the record it stands for (written.ts). */
  wrote(record: InstanceRecord, sent: CompleteStepBody): void {
    const pid = processOf(record);
    const lut = record.last_updated_time;
    this.own.push({ id: record.id, ...(pid === undefined ? {} : { process_id: pid }), ...(typeof lut === "string" ? { last_updated_time: lut } : {}) });
    const flags = writtenFlags(record, sent);
    if (pid === undefined || typeof lut !== "string" || Number.isNaN(Date.parse(lut)) || flags === undefined) return;
    const entry: RecordEntry = { process_id: pid, flags, written: true, compact: compactRecord(record, this.newSkeletons) };
    this.recordsWritten.add(`${record.id}:${flags}`);
    this.writeRecord(JSON.stringify({ record: entry }), entry.compact.skeleton);
  }

  /** The ids a bulk abort of ours returned. */
  abortedIds(ids: readonly number[]): void {
    for (const id of ids) this.own.push({ id });
    if (ids.length > 0) this.out.line(JSON.stringify({ aborted: { ids } }));
  }

  /**
   * Whether a record we wrote through still holds: its instance's last_updated_time is exactly the one our write's
   * answer gave. One listing (`last_updated_time` after and before that very instant: the bounds are inclusive)
   * answers it for every instance of ours written at that instant; a later change by anyone moves the time and
   * drops the instance from it. A single write at its instant is read instead (one request either way).
   */
  private async stillOurs(w: RunWorkflow, ref: RecordRef, lut: string): Promise<boolean> {
    const key = `${w.pid}|${lut}`;
    if ((this.writtenAt.get(key) ?? 0) < 2) return false;
    let p = this.unchangedAt.get(key);
    if (!p) {
      p = (async () => {
        const ids = new Set<number>();
        for await (const page of this.inner.instancePages(w.pid, { last_updated_time_after: lut, last_updated_time_before: lut })) {
          w.tally.windows++;
          for (const i of page.results) ids.add(i.id);
        }
        return ids;
      })();
      p.catch(() => undefined);
      this.unchangedAt.set(key, p);
    }
    return (await p).has(ref.id);
  }

  // ---- endpoints --------------------------------------------------------------------------------------------------

  override listWorkflows(): Promise<Workflow[]> {
    this.planned = true;
    return this.inner.listWorkflows();
  }

  override async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }

  override async *instancePages(processId: number, query: InstanceListQuery = {}): AsyncGenerator<Page<InstanceListItem>> {
    await this.ready(processId);
    const q = canonicalQuery(query);
    const w = this.workflow(processId);
    if (w.cold) return yield* this.passThrough(processId, q, query);
    // instances updated since the changes listing's start are all on it: with none, such a question holds nothing
    const after = updatedAfter(q);
    if (after !== undefined && after >= this.since(w).at) {
      const changed = await this.changedIds(w);
      if (changed.size > 0) return yield* this.passThrough(processId, q, query);
      this.opts.explain?.({ subject: `selection ${JSON.stringify(q)}`, workflow_id: processId, choice: "state", requests: 0, why: "nothing updated since the last run looked, and it asks only for instances updated later" });
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
      const drifts = (q.total_runtime_min !== undefined || q.total_runtime_max !== undefined) && Date.parse(ref.run_at) !== this.nowMs;
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
    for (const page of listing.pages) for (const item of page.results) if (!changed.has(item.id)) members.set(item.id, item);
    listing.pages = []; // the elements are in `members` now
    const fromCache = members.size;
    let requests = 0;
    const list = async (slice: CanonicalQuery): Promise<InstanceListItem[]> => {
      const out: InstanceListItem[] = [];
      if (emptyRange(slice)) return out; // a slice of no instant: nothing to ask
      for await (const page of this.inner.instancePages(processId, slice)) {
        requests++;
        out.push(...page.results);
      }
      return out;
    };
    for (const s of plan.filter((p) => p.effect === "leave")) for (const item of await list(s.query)) members.delete(item.id);
    const fresh: InstanceListItem[] = [];
    for (const s of plan.filter((p) => p.effect === "enter")) fresh.push(...(await list(s.query)));
    if (changed.size > 0) fresh.push(...(await list(changedQuery(q, this.since(w).at))));
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
    this.writeListing({ process_id: processId, query: q, run_at: this.nowIso, complete: true, pages: [{ count: results.length, results }] });
    yield { count: results.length, next: null, previous: null, results };
  }

  /** Asks the service, and writes the pages read into the next state (complete once one says there is no next). */
  private async *passThrough(processId: number, q: CanonicalQuery, query: InstanceListQuery): AsyncGenerator<Page<InstanceListItem>> {
    const n = this.out.nextListing();
    const pages: Array<{ count: number | null; size: number }> = [];
    let complete = false;
    try {
      for await (const page of this.inner.instancePages(processId, query)) {
        this.writeItems(n, pages.length, page.results);
        pages.push({ count: page.count, size: page.results.length });
        complete = page.next === null;
        if (q.ordering !== undefined) for (const i of page.results) this.probes.add(i.id);
        this.saw(page.results.map((i) => i.id), true);
        yield page;
      }
      complete = true;
    } finally {
      this.writeListingHead(n, { process_id: processId, query: q, run_at: this.nowIso, complete }, pages);
    }
  }

  /** A cached answer that still holds (nothing changed, no bound moved); beyond its pages, the service again. */
  private async *replay(processId: number, q: CanonicalQuery, query: InstanceListQuery, cached: Listing): AsyncGenerator<Page<InstanceListItem>> {
    this.writeListing({ ...cached, query: q, run_at: this.nowIso });
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

  /** A record of the previous run, read and checked in full now; undefined (read it again) when its line does not fit. */
  private async keptRecord(ref: RecordRef): Promise<{ record: InstanceRecord; entry: RecordEntry; text: string } | undefined> {
    const [text = ""] = await (this.prev as StateIndex).lines([ref.line]);
    const raw = parsedOrNothing(text);
    const parsed = RecordEntrySchema.safeParse(isRecord(raw) ? raw.record : undefined);
    if (!parsed.success || parsed.data.compact.record.id !== ref.id) return undefined;
    const record = expandRecord(parsed.data.compact, this.prev?.skeletons ?? new Map());
    return record ? { record, entry: parsed.data, text } : undefined;
  }

  override async getInstance(id: number, opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {}): Promise<InstanceRecord> {
    await this.checkBack();
    const key = `${id}:${flagsOf(opts)}`;
    const cached = this.prev?.records.get(key);
    // the structure probe too: the newest instance's snapshot changes only with it (or a newer one starts), both
    // listed as changed, and a fresh read of it is checked against the structure digest below
    if (cached) {
      const w = this.workflow(cached.process_id);
      const kept = w.cold ? undefined : await this.keptRecord(cached);
      const holds = kept && (cached.written !== null ? kept.record.last_updated_time === cached.written && (await this.stillOurs(w, cached, cached.written)) : !(await this.changedIds(w)).has(id));
      if (kept && holds && !w.cold) {
        if (!this.recordsWritten.has(key)) {
          this.recordsWritten.add(key);
          // shown unchanged now: from here on an ordinary record of this run
          const { written: _w, ...entry } = kept.entry;
          this.writeRecord(cached.written !== null ? JSON.stringify({ record: entry }) : kept.text, cached.skeleton);
          if (cached.written !== null) w.tally.written++;
        }
        this.saw([id], false);
        if (cached.written === null) w.tally.recordsKept++;
        return kept.record;
      }
    }
    const record = await this.inner.getInstance(id, opts);
    this.saw([id], true);
    const pid = processOf(record);
    if (pid === undefined) return record;
    const w = this.workflow(pid);
    w.tally.recordsRead++;
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
    this.recordsWritten.add(key);
    this.writeRecord(JSON.stringify({ record: entry }), entry.compact.skeleton);
    return record;
  }

  override async *formFieldPages(processId: number, stepId: number, actionId: number, query: FormFieldQuery = {}): AsyncGenerator<Page<FormFieldValue>> {
    const ids = idsOf(query.instance_ids);
    const other = Object.keys(query).filter((k) => k !== "instance_ids" && k !== "limit" && query[k] !== undefined);
    if (!ids || other.length > 0 || ids.some((n) => !Number.isSafeInteger(n))) return yield* this.inner.formFieldPages(processId, stepId, actionId, query);
    await this.ready(processId);
    const w = this.workflow(processId);
    const old = w.cold ? undefined : this.prev?.fields.get(`${processId}:${stepId}:${actionId}`);
    const changed = old ? await this.changedIds(w) : new Set<number>();
    const write = (id: number, v: FormFieldValue | null): void => this.out.line(JSON.stringify({ value: { f: [processId, stepId, actionId], id, v } }));
    const hitIds: number[] = [];
    const hitLines: number[] = [];
    const missing: number[] = [];
    for (const id of ids) {
      const line = old && !changed.has(id) ? old.get(id) : undefined;
      if (line === undefined) missing.push(id);
      else {
        hitIds.push(id);
        hitLines.push(line);
      }
    }
    const results: FormFieldValue[] = [];
    const texts = hitLines.length > 0 ? await (this.prev as StateIndex).lines(hitLines) : [];
    const answered: number[] = [];
    hitIds.forEach((id, i) => {
      const hit = valueLine(parsedOrNothing(texts[i] ?? ""));
      if (!hit || hit.id !== id) {
        missing.push(id); // a line that does not fit: asked again
        return;
      }
      answered.push(id);
      this.shareSettings(hit.v);
      this.out.line(texts[i] as string); // the same line again: still true
      if (hit.v !== null) results.push(hit.v);
    });
    this.saw(answered, false);
    w.tally.valuesKept += answered.length;
    if (missing.length > 0) {
      const missed = new Set(missing);
      const found = new Map<number, FormFieldValue>();
      w.tally.valuesAsked += missing.length;
      for await (const page of this.inner.formFieldPages(processId, stepId, actionId, { ...query, instance_ids: missing })) {
        w.tally.fieldPages++;
        for (const r of page.results) found.set(r.instance_id, r);
      }
      for (const r of found.values()) this.shareSettings(r);
      for (const id of missing) write(id, found.get(id) ?? null);
      for (const r of found.values()) if (missed.has(r.instance_id)) results.push(r);
      this.saw(missing, true);
    }
    yield { count: results.length, next: null, previous: null, results };
  }

  override async completeStep(id: number, body: CompleteStepBody): Promise<InstanceRecord> {
    const record = await this.inner.completeStep(id, body);
    this.wrote(record, body);
    return record;
  }

  override async bulkAbort(ids: number[]): Promise<{ ids: number[] }> {
    const answer = await this.inner.bulkAbort(ids);
    this.abortedIds(answer.ids);
    return answer;
  }

}

/**
 * The client an apply sends through (`apply --state`, `watch --apply`): every call goes to the service as it is; the
 * answers of our own writes are written through into the state (StateClient.wrote, abortedIds). Reads are not
 * answered from the state: apply judges staleness from what the service says now.
 */
export class WriteThroughClient extends DelegatingClient {
  constructor(inner: ApiClient, private readonly state: StateClient) {
    super(inner);
  }

  override async completeStep(id: number, body: CompleteStepBody): Promise<InstanceRecord> {
    const record = await this.inner.completeStep(id, body);
    this.state.wrote(record, body);
    return record;
  }
  override async bulkAbort(ids: number[]): Promise<{ ids: number[] }> {
    const answer = await this.inner.bulkAbort(ids);
    this.state.abortedIds(answer.ids);
    return answer;
  }
}
