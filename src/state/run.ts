/**
 * What the StateClient (./client.ts) is made of, as its modules see it: the listings cache (./listings.ts), records
 * and field values (./records.ts), checkpoints and the commit (./checkpoint.ts) each run with the client as `this`
 * and reach it through `StateRun`; and the small helpers they share.
 */
import { createHash } from "node:crypto";
import type {
  ApiClient,
  FormFieldQuery,
  InstanceListItem,
  InstanceListQuery,
  InstanceRecord,
  Page,
  ServiceClock,
} from "../api/index.js";
import { canonicalJson } from "../plan/digest.js";
import { isRecord } from "../model/guards.js";
import { plural } from "../text/plural.js";
import type { CanonicalQuery } from "./bounds.js";
import type { ListingRef, RecordRef, StateIndex } from "./reader.js";
import type { Marks, WorkflowMark } from "./schema.js";
import type { StateWriter } from "./writer.js";
import type { Checkpoints, CheckpointPolicy, SyncProgress } from "./sync.js";
import type { Census } from "./went-back.js";

/** A listing as a run uses it: the question, when it was asked, and its pages. */
export interface Listing {
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
  /** when checkpoints are written while a workflow is read in full (default every 250 records or 60 s) */
  checkpoints?: CheckpointPolicy;
  /** told after each checkpoint: how far the sync got */
  onCheckpoint?(p: SyncProgress): void;
  /** changes listings a watcher's poll asked just before this run, by workflow (./known.ts, listedChanges) */
  listed?: ListedChanges;
}

/**
 * A changes listing asked just before a run by someone else of the same process (a watcher's poll, src/watch/poll.ts):
 * by workflow, its `last_updated_time_after` bound (ISO), every id it listed (all its pages), and an instant of the
 * service's clock no later than the listing (the greatest Date of the answers that arrived before it was sent).
 */
export type ListedChanges = ReadonlyMap<
  number,
  {
    after: string;
    ids: readonly number[];
    /** its elements, when it kept them (a changed slice is then decided from them and records: ./known.ts) */
    items?: readonly InstanceListItem[];
    lookedMs: number;
    /** records the poll read with values after the listing (its newest update): reads of this run (./records.ts) */
    records?: readonly InstanceRecord[];
  }
>;

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

export interface RunWorkflow {
  pid: number;
  /** record reads and field values answered from the state, and asked of the service (requests: record reads, field pages) */
  tally: {
    recordsKept: number;
    recordsRead: number;
    valuesKept: number;
    valuesAsked: number;
    fieldPages: number;
    /** field values of changed instances taken from their records read with values (./values.ts) */
    valuesByRecords: number;
    written: number;
    windows: number;
  };
  cold: boolean;
  /** its first sync was not finished when the state was written (a checkpoint): what it holds is used, the rest read */
  partial: boolean;
  /** records of it written into the next state this run (distinct), and the largest count a listing of it gave */
  synced: number;
  total: number | null;
  mark: WorkflowMark | undefined;
  changed?: Promise<ReadonlySet<number>>;
  /** the changes listing's answer, once it came */
  changedSet?: ReadonlySet<number>;
  /** its elements, when they are known (the run's own listing, or the poll's that kept them) */
  changedItems?: ReadonlyMap<number, InstanceListItem>;
  structure: string | null;
  newestSeen: number | null;
}

export const iso = (t: number): string => new Date(t).toISOString();
/** A line of the previous state as JSON; undefined when it is not JSON (the caller then asks the service). */
export function parsedOrNothing(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** "N things" as every message says it (src/text/plural.ts) */
export const count = plural;

export function flagsOf(opts: { injectValues?: boolean; stepsTimeFrame?: boolean }): string {
  return `${opts.injectValues ? "v" : ""}${opts.stepsTimeFrame ? "t" : ""}`;
}

/** The workflow id in a record's `process` URI ({base_url}/processes/<id>/). */
export function processOf(record: InstanceRecord): number | undefined {
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
    actions: Array.isArray(s.actions)
      ? s.actions.filter(isRecord).map((a) => ({ id: a.id, name: a.name, type: a.type, settings: a.settings }))
      : [],
  }));
  return createHash("sha256")
    .update(canonicalJson({ name: snapshot.name, steps }))
    .digest("hex")
    .slice(0, 32);
}

/** The ids of a form-field question asked by ids alone (a `limit` aside), or undefined for any other question. */
export function idsOnly(query: FormFieldQuery): number[] | undefined {
  const ids = idsOf(query.instance_ids);
  const other = Object.keys(query).some((k) => k !== "instance_ids" && k !== "limit" && query[k] !== undefined);
  return other ? undefined : ids;
}

export function idsOf(v: FormFieldQuery[string]): number[] | undefined {
  if (Array.isArray(v)) return v.map(Number);
  if (typeof v === "string")
    return v
      .split(",")
      .filter((s) => s.trim() !== "")
      .map(Number);
  if (typeof v === "number") return [v];
  return undefined;
}

/** The client's state and steps its modules use (./client.ts implements it). */
export interface StateRun {
  /** the service (the client it wraps) */
  readonly service: ApiClient;
  readonly opts: StateClientOptions;
  readonly nowMs: number;
  readonly nowIso: string;
  readonly workflows: Map<number, RunWorkflow>;
  readonly prev: StateIndex | undefined;
  readonly oldListings: Map<string, ListingRef[]>;
  readonly writtenAt: Map<string, number>;
  readonly unchangedAt: Map<string, Promise<ReadonlySet<number>>>;
  readonly newSkeletons: Map<string, unknown>;
  readonly skeletonsWritten: Set<string>;
  readonly recordsWritten: import("./id-bits.js").RecordsWritten;
  readonly probes: Set<number>;
  readonly own: OwnWrite[];
  readonly clockAtStart: ServiceClock | undefined;
  planned: boolean;
  readonly shareSettings: (value: import("../api/index.js").FormFieldValue | null) => void;
  readonly out: StateWriter;
  readonly checkpoints: Checkpoints;
  carried: boolean;
  readonly carriedMarks: Marks;
  checkpointed: SyncProgress | undefined;
  /** whether the service went back since the last run (./back.ts), asked once before anything is answered */
  back: Promise<void> | undefined;
  /** why it went back: then nothing of the previous state is used */
  wentBack: string | undefined;
  /** this run's counts of workflows (./went-back.ts), for the next run */
  readonly censuses: Map<number, Census>;
  /** the census's page by workflow: the answer to the same question asked again this run */
  readonly censusPages: Map<number, Page<InstanceListItem>>;
  /** lists this run built (slices), by their question less the page size: asked once a run */
  readonly sliceLists: Map<string, Promise<InstanceListItem[]>>;
  /** a count to compare with was asked for (or not needed) this run */
  baseline: boolean;
  /** records with values read this run for field values, by instance (./values.ts) */
  readonly valueRecords: import("./value-records.js").ValueRecords;
  /** per workflow, the fields the previous state holds values of */
  readonly fieldsOf: Map<number, number>;
  getInstance(id: number, opts?: { injectValues?: boolean; stepsTimeFrame?: boolean }): Promise<InstanceRecord>;
  cheaperByRecords(w: RunWorkflow, ids: readonly number[]): boolean;
  valuesByRecords(
    stepId: number,
    actionId: number,
    ids: readonly number[],
  ): Promise<Map<number, import("../api/index.js").FormFieldValue | null> | undefined>;
  listOnce(
    processId: number,
    slice: CanonicalQuery,
    counted: () => void,
    derive?: () => Promise<InstanceListItem[] | undefined>,
  ): Promise<InstanceListItem[]>;
  changedByRecords(w: RunWorkflow, slice: CanonicalQuery): Promise<InstanceListItem[] | undefined>;
  recentByRecords(w: RunWorkflow, q: CanonicalQuery): Promise<InstanceListItem[] | undefined>;
  answered(processId: number, q: CanonicalQuery, items: InstanceListItem[]): AsyncGenerator<Page<InstanceListItem>>;
  leavingByRecords(
    slice: import("./bounds.js").Slice,
    members: { readonly size: number; keys(): Iterable<number> },
  ): Promise<Set<number> | undefined>;
  servicePages(processId: number, q: CanonicalQuery, query: InstanceListQuery): AsyncGenerator<Page<InstanceListItem>>;
  newestHolds(w: RunWorkflow, q: CanonicalQuery, ref: ListingRef, changed: ReadonlySet<number>): Promise<boolean>;
  checkBack(): Promise<void>;
  ready(pid: number): Promise<void>;
  goneBack(why: string): void;
  census(pid: number): Promise<Census>;
  workflow(pid: number): RunWorkflow;
  since(w: RunWorkflow): { at: number; why: string };
  changedIds(w: RunWorkflow): Promise<ReadonlySet<number>>;
  counted(pid: number, n: number | null): void;
  saw(ids: Iterable<number>, fresh: boolean): void;
  marks(final?: boolean): Marks;
  syncing(): boolean;
  progress(): SyncProgress;
  writeRecord(text: string, skeleton: string | null): void;
  passThrough(processId: number, q: CanonicalQuery, query: InstanceListQuery): AsyncGenerator<Page<InstanceListItem>>;
  replay(
    processId: number,
    q: CanonicalQuery,
    query: InstanceListQuery,
    ref: ListingRef,
  ): AsyncGenerator<Page<InstanceListItem>>;
  sliced(
    processId: number,
    q: CanonicalQuery,
    query: InstanceListQuery,
    ref: ListingRef,
    plan: readonly import("./bounds.js").Slice[],
    w: RunWorkflow,
  ): AsyncGenerator<Page<InstanceListItem>>;
  readPage(ref: ListingRef, p: number): Promise<InstanceListItem[] | undefined>;
  copyListing(ref: ListingRef): Promise<void>;
  writeItems(n: number, p: number, items: readonly InstanceListItem[]): void;
  writeListingHead(
    n: number,
    l: Pick<Listing, "process_id" | "query" | "run_at" | "complete">,
    pages: Array<{ count: number | null; size: number }>,
  ): void;
  keptRecord(
    ref: RecordRef,
  ): Promise<{ record: InstanceRecord; entry: import("./schema.js").RecordEntry; text: string } | undefined>;
  stillOurs(w: RunWorkflow, ref: RecordRef, lut: string): Promise<boolean>;
  carryAtCheckpoint(): Promise<void>;
  writeCheckpoint(): Promise<void>;
  carryForward(prev: StateIndex): Promise<void>;
  due(): Promise<void>;
}
