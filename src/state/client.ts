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
import {
  DelegatingClient,
  type ApiClient,
  type CompleteStepBody,
  FormFieldQuery,
  FormFieldValue,
  InstanceListItem,
  InstanceListQuery,
  InstanceRecord,
  Page,
  ServiceClock,
  Workflow,
} from "../api/index.js";
import { compactRecord } from "./compact.js";
import { FROM_STATE, IdBits, READ_AGAIN, RecordsWritten } from "./id-bits.js";
import type { ListingRef, StateIndex } from "./reader.js";
import { settingsSharer, type Marks, type RecordEntry } from "./schema.js";
import { shapeKey } from "./bounds.js";
import { writtenFlags } from "./written.js";
import type { StateWriter } from "./writer.js";
import { Checkpoints, DEFAULT_CHECKPOINTS, type SyncProgress } from "./sync.js";
import {
  processOf,
  type OwnWrite,
  type RunWorkflow,
  type StateClientOptions,
  type StateCounts,
  type StateRun,
} from "./run.js";

export { structureDigest, type OwnWrite, type StateChoice, type StateClientOptions, type StateCounts } from "./run.js";
import { answered, instancePages, passThrough, recentByRecords, writeItems, writeListingHead } from "./listings.js";
import { copyListing, readPage, replay, sliced } from "./cached-pages.js";
import { formFieldPages, getInstance, keptRecord, stillOurs } from "./records.js";
import { carryAtCheckpoint, carryForward, checkpoint, commit, due, writeCheckpoint } from "./checkpoint.js";
import { census, checkBack, goneBack, ready } from "./back.js";
import type { Census } from "./went-back.js";
import { explainAnswers, progress, syncing } from "./progress.js";
import { marks } from "./marks.js";
import { changedByRecords, changedIds, leavingByRecords, listOnce, newestHolds, servicePages, since } from "./known.js";
import { cheaperByRecords, valuesByRecords } from "./values.js";
import { ValueRecords } from "./value-records.js";
export { WriteThroughClient } from "./write-through.js";

export class StateClient extends DelegatingClient implements StateRun {
  readonly nowMs: number;
  readonly nowIso: string;
  readonly workflows = new Map<number, RunWorkflow>();
  /** the previous state (none with --full-refresh): its lines are read as they are used */
  readonly prev: StateIndex | undefined;
  /** the previous run's listings by the shape of their question (bounds.ts shapeKey) */
  readonly oldListings = new Map<string, ListingRef[]>();
  /** written-through records of the previous state by `workflow|last_updated_time`: how many share that instant */
  readonly writtenAt = new Map<string, number>();
  /** per `workflow|last_updated_time`: the instances whose last_updated_time is exactly that now (one listing) */
  readonly unchangedAt = new Map<string, Promise<ReadonlySet<number>>>();
  readonly newSkeletons = new Map<string, unknown>();
  readonly skeletonsWritten = new Set<string>();
  /** per instance: answered from the state, read again, its records written (./id-bits.ts: no object per instance) */
  readonly seen = new IdBits();
  readonly recordsWritten = new RecordsWritten(this.seen);
  /** instances named by an ordered listing (the structure probe): their records are always read */
  readonly probes = new Set<number>();
  readonly own: OwnWrite[] = [];
  /** the service's clock when this client began (its look is bounded by what the clock says after) */
  readonly clockAtStart: ServiceClock | undefined;
  /** planning asked through this client (else a commit carries the previous state forward: `apply plan.json`) */
  planned = false;
  warnedResync = false;
  back: Promise<void> | undefined;
  wentBack: string | undefined;
  readonly censuses = new Map<number, Census>();
  readonly censusPages = new Map<number, Page<InstanceListItem>>();
  readonly sliceLists = new Map<string, Promise<InstanceListItem[]>>();
  readonly valueRecords = new ValueRecords(this.newSkeletons);
  readonly fieldsOf = new Map<number, number>();
  baseline = false;
  readonly shareSettings = settingsSharer();
  readonly out: StateWriter;
  readonly checkpoints: Checkpoints;

  get service(): ApiClient {
    return this.inner;
  }

  constructor(
    inner: ApiClient,
    readonly opts: StateClientOptions,
  ) {
    super(inner);
    this.nowMs = opts.now.getTime();
    this.nowIso = opts.now.toISOString();
    this.out = opts.writer;
    this.checkpoints = new Checkpoints(opts.checkpoints ?? DEFAULT_CHECKPOINTS, () => this.writeCheckpoint());
    this.prev = opts.fullRefresh ? undefined : opts.previous;
    this.clockAtStart = inner.serviceClock?.();
    for (const l of this.prev?.listings.values() ?? []) {
      const key = shapeKey(l.process_id, l.query);
      const same = this.oldListings.get(key);
      if (same) same.push(l);
      else this.oldListings.set(key, [l]);
    }
    for (const r of this.prev?.records.writtenThrough() ?? []) {
      if (r.written === null) continue;
      const key = `${r.process_id}|${r.written}`;
      this.writtenAt.set(key, (this.writtenAt.get(key) ?? 0) + 1);
    }
  }

  // ---- bookkeeping ------------------------------------------------------------------------------------------------

  workflow(pid: number): RunWorkflow {
    this.planned = true;
    let w = this.workflows.get(pid);
    if (w) return w;
    const mark = this.prev?.marks[String(pid)];
    let cold = !mark;
    // a partial sync is not "last read in full": it goes on from where it is however long it takes
    if (mark && !cold && !mark.partial && this.nowMs - Date.parse(mark.synced_at) > this.opts.resyncAfterMs) {
      cold = true;
      if (!this.warnedResync) {
        this.warnedResync = true;
        this.opts.warn(
          `state: last read in full at ${mark.synced_at}, longer ago than --resync-after: workflows read that long ago are read in full again`,
        );
      }
    }
    if (mark && !cold && Date.parse(mark.run_at) > this.nowMs) cold = true; // the clock went back: nothing to reason from
    if (this.wentBack !== undefined) cold = true;
    w = {
      pid,
      cold,
      partial: mark?.partial === true,
      synced: 0,
      total: null,
      mark,
      tally: {
        recordsKept: 0,
        recordsRead: 0,
        valuesKept: 0,
        valuesAsked: 0,
        fieldPages: 0,
        valuesByRecords: 0,
        written: 0,
        windows: 0,
      },
      structure: mark?.structure ?? null,
      newestSeen: mark?.newest_seen && this.wentBack === undefined ? Date.parse(mark.newest_seen) : null,
    };
    this.workflows.set(pid, w);
    return w;
  }

  /** From when changes are listed (./known.ts). */
  since(w: RunWorkflow): { at: number; why: string } {
    return since.call(this, w);
  }

  /** Ids of the workflow's instances updated since the last run looked: one listing per run (./known.ts). */
  changedIds(w: RunWorkflow): Promise<ReadonlySet<number>> {
    return changedIds.call(this, w);
  }

  /** The service's count of a selection of the workflow: the largest is what its sync has to read. */
  counted(pid: number, n: number | null): void {
    const w = this.workflows.get(pid);
    if (w && n !== null && (w.total === null || n > w.total)) w.total = n;
  }

  saw(ids: Iterable<number>, fresh: boolean): void {
    const mark = fresh ? READ_AGAIN : FROM_STATE;
    for (const id of ids) this.seen.mark(id, mark);
  }

  counts(): StateCounts {
    let fromState = 0;
    let readAgain = 0;
    for (const [, m] of this.seen.entries()) {
      if (m & READ_AGAIN) readAgain++;
      else if (m & FROM_STATE) fromState++;
    }
    return { fromState, readAgain };
  }

  /** Our own writes this run (write-through), in the order their answers came. */
  written(): readonly OwnWrite[] {
    return this.own;
  }

  /** `--explain-requests`: what the state answered of the reads the planner asked for (./progress.ts). */
  explainAnswers(): void {
    explainAnswers.call(this);
  }

  /** The bookmarks of the workflows this run used, for the next run (./marks.ts). */
  marks(final = true): Marks {
    return marks.call(this, final);
  }

  /** Whether a workflow is being read in full (./progress.ts). */
  syncing(): boolean {
    return syncing.call(this);
  }

  /** How far the sync of the workflows being read in full got (./progress.ts). */
  progress(): SyncProgress {
    return progress.call(this);
  }

  /** the figures of the last checkpoint written */
  checkpointed: SyncProgress | undefined;

  /** the previous state's answers were carried into this run's file (at its first checkpoint) */
  carried = false;
  /** bookmarks of workflows this run did not use, carried with their answers */
  readonly carriedMarks: Marks = {};

  // ---- writing the next state as the run goes -----------------------------------------------------------------------

  writeRecord(text: string, skeleton: string | null): void {
    if (skeleton !== null && !this.skeletonsWritten.has(skeleton)) {
      this.skeletonsWritten.add(skeleton);
      this.out.line(
        JSON.stringify({
          skeleton: { key: skeleton, snapshot: this.newSkeletons.get(skeleton) ?? this.prev?.skeletons.get(skeleton) },
        }),
      );
    }
    this.out.line(text);
  }

  // ---- write-through ----------------------------------------------------------------------------------------------

  /** The answer of our own complete_step/save_step: the next state keeps it as the record it stands for (written.ts). */
  wrote(record: InstanceRecord, sent: CompleteStepBody): void {
    const pid = processOf(record);
    const lut = record.last_updated_time;
    this.own.push({
      id: record.id,
      ...(pid === undefined ? {} : { process_id: pid }),
      ...(typeof lut === "string" ? { last_updated_time: lut } : {}),
    });
    const flags = writtenFlags(record, sent);
    if (pid === undefined || typeof lut !== "string" || Number.isNaN(Date.parse(lut)) || flags === undefined) return;
    const entry: RecordEntry = {
      process_id: pid,
      flags,
      written: true,
      compact: compactRecord(record, this.newSkeletons),
    };
    this.recordsWritten.add(record.id, flags);
    this.writeRecord(JSON.stringify({ record: entry }), entry.compact.skeleton);
  }

  /** The ids a bulk abort of ours returned. */
  abortedIds(ids: readonly number[]): void {
    for (const id of ids) this.own.push({ id });
    if (ids.length > 0) this.out.line(JSON.stringify({ aborted: { ids } }));
  }

  // ---- the room's modules: the listings cache (./listings.ts), records and field values (./records.ts), checkpoints
  // and the commit (./checkpoint.ts); their functions run with this client as `this`
  readonly passThrough = passThrough;
  readonly replay = replay;
  readonly sliced = sliced;
  readonly readPage = readPage;
  readonly copyListing = copyListing;
  readonly writeItems = writeItems;
  readonly writeListingHead = writeListingHead;
  readonly keptRecord = keptRecord;
  readonly stillOurs = stillOurs;
  readonly carryAtCheckpoint = carryAtCheckpoint;
  readonly writeCheckpoint = writeCheckpoint;
  readonly carryForward = carryForward;
  readonly due = due;
  readonly checkBack = checkBack;
  readonly ready = ready;
  readonly goneBack = goneBack;
  readonly census = census;
  readonly listOnce = listOnce;
  readonly leavingByRecords = leavingByRecords;
  readonly servicePages = servicePages;
  readonly newestHolds = newestHolds;
  readonly changedByRecords = changedByRecords;
  readonly recentByRecords = recentByRecords;
  readonly answered = answered;
  readonly cheaperByRecords = cheaperByRecords;
  readonly valuesByRecords = valuesByRecords;

  /** A checkpoint now (the run was stopped or reached its --max-duration), when a sync is going on; its figures. */
  checkpoint(): Promise<SyncProgress | undefined> {
    return checkpoint.call(this);
  }

  /**
   * Completes the next state file and puts it in place: call only after a run that read all it needed (./checkpoint.ts).
   */
  commit(): Promise<void> {
    return commit.call(this);
  }

  // ---- endpoints --------------------------------------------------------------------------------------------------

  override listWorkflows(): Promise<Workflow[]> {
    this.planned = true;
    return this.inner.listWorkflows();
  }

  override async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }

  override instancePages(processId: number, query: InstanceListQuery = {}): AsyncGenerator<Page<InstanceListItem>> {
    return instancePages.call(this, processId, query);
  }

  override getInstance(
    id: number,
    opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {},
  ): Promise<InstanceRecord> {
    return getInstance.call(this, id, opts);
  }

  override formFieldPages(
    processId: number,
    stepId: number,
    actionId: number,
    query: FormFieldQuery = {},
  ): AsyncGenerator<Page<FormFieldValue>> {
    return formFieldPages.call(this, processId, stepId, actionId, query);
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
