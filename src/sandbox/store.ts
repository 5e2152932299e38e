/**
 * SandboxStore: the sandbox's in-memory data, shared by the HTTP handlers and, in-process, by tests.
 *
 * Reading:   `get(id)` (a deep copy of the internal state; times are epoch ms), `list(processId?)` (copies, id order),
 *            `record(id, opts)` (exactly what GET /instances/{id}/ shows), `status(id)`, `now()`.
 * Changing:  `update(id, fn)` for any outside edit (e.g. `store.update(100001, (i) => { i.tags.push("x"); })`),
 *            plus `setValue`, `applyStep` (save/complete, as 4.4 does) and `abort` (as 4.5 does).
 * Every change bumps `version`, moves the instance within cached sort orders, and (unless `{ touch: false }`) sets last_updated_time to
 * the clock — strictly later than the previous value, so every change is visible even with a pinned clock.
 */
import type { CatalogStep } from "./catalog.js";
import { StateError } from "./errors.js";
import { FIRST_INSTANCE_ID, generateInstances } from "./generate.js";
import { orderedSteps, stepInWorkflow, workflowOf } from "./lookup.js";
import {
  buildSorted,
  orderingKey,
  repositionInView,
  usesRuntime,
  type OrderField,
  type SortedView,
} from "./ordering.js";
import { instanceRecord, type InstanceRecord, type RecordOptions, type Urls } from "./serialize.js";
import { cloneState, statusOf, type InstanceState, type InstanceStatus } from "./state.js";

export interface StoreOptions {
  seed: number;
  instances: number;
  /** pins the clock; otherwise real time (data is generated relative to the start) */
  now?: Date;
}

export interface StepAction {
  action_id: number;
  /** stored as given; null or undefined clears the field */
  input_object: unknown;
}

const MAX_CACHED_ORDERS = 24;

interface CachedView {
  processId: number;
  order: readonly OrderField[];
  asOf: number;
  view: SortedView;
}

export class SandboxStore {
  readonly seed: number;
  private pinnedNow: number | null;
  /** added to real time when the clock is not pinned (advanceClock) */
  private clockOffset = 0;
  private readonly byId = new Map<number, InstanceState>();
  private readonly byProcess = new Map<number, InstanceState[]>();
  private readonly sortCache = new Map<string, CachedView>();
  private currentVersion = 0;
  private tokenIndex: Map<string, number> | undefined;
  private currentUrls: Urls = { origin: "http://127.0.0.1", baseUrl: "http://127.0.0.1/api" };

  constructor(opts: StoreOptions) {
    this.seed = opts.seed;
    this.pinnedNow = opts.now ? opts.now.getTime() : null;
    const now = this.pinnedNow ?? Date.now();
    for (const inst of generateInstances({ seed: opts.seed, count: opts.instances, now })) {
      this.byId.set(inst.id, inst);
      const list = this.byProcess.get(inst.processId) ?? [];
      list.push(inst);
      this.byProcess.set(inst.processId, list);
    }
  }

  /** The sandbox clock in epoch ms: the pinned `now` option, or real time. */
  nowMs(): number {
    return this.pinnedNow ?? Date.now() + this.clockOffset;
  }

  /**
   * Moves the sandbox clock forward by `ms` (people's work between runs, deadlines coming due). A pinned clock moves
   * by exactly that; a real one keeps running from the moved point.
   */
  advanceClock(ms: number): Date {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`the clock only moves forward, got ${ms} ms`);
    if (this.pinnedNow !== null) this.pinnedNow += ms;
    else this.clockOffset += ms;
    // total_runtime orders of running instances depend on the clock
    this.sortCache.clear();
    return this.now();
  }

  /** Adds a newly started instance (the spec does not show the start endpoint; people.ts starts them in-process). */
  insert(inst: InstanceState): void {
    if (this.byId.has(inst.id)) throw new Error(`instance ${inst.id} exists`);
    const own = cloneState(inst);
    this.byId.set(own.id, own);
    const list = this.byProcess.get(own.processId) ?? [];
    list.push(own);
    this.byProcess.set(own.processId, list);
    this.tokenIndex?.set(own.publicToken, own.id);
    for (const [key, cached] of this.sortCache) if (cached.processId === own.processId) this.sortCache.delete(key);
    this.currentVersion++;
  }

  /** A copy of every instance: the service's data as a backup holds it (the clock is no part of it). */
  backup(): InstanceState[] {
    return [...this.byId.values()].map(cloneState);
  }

  /**
   * Puts a backup back in place of all instances, as restoring a service's database does: instances started since
   * are gone, updates since undone, and the next instance takes the next id after the backup's. The clock runs on.
   */
  restore(backup: readonly InstanceState[]): void {
    this.byId.clear();
    this.byProcess.clear();
    this.sortCache.clear();
    this.tokenIndex = undefined;
    for (const inst of backup) {
      const own = cloneState(inst);
      this.byId.set(own.id, own);
      const list = this.byProcess.get(own.processId) ?? [];
      list.push(own);
      this.byProcess.set(own.processId, list);
    }
    this.currentVersion++;
  }

  /** The next free instance id. */
  nextId(): number {
    let max = 0;
    for (const id of this.byId.keys()) if (id > max) max = id;
    return Math.max(max + 1, FIRST_INSTANCE_ID);
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  /** Increases on every change (tests can use it to see that something changed). */
  get version(): number {
    return this.currentVersion;
  }

  get size(): number {
    return this.byId.size;
  }

  get urls(): Urls {
    return this.currentUrls;
  }

  /** Set once the server listens (public URLs and resource URIs depend on the port). */
  setOrigin(origin: string): void {
    this.currentUrls = { origin, baseUrl: `${origin}/api` };
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  /** A deep copy of one instance's state (changing it changes nothing; use `update`). */
  get(id: number): InstanceState | undefined {
    const inst = this.byId.get(id);
    return inst ? cloneState(inst) : undefined;
  }

  /** Copies of all instances (or one workflow's), in id order. Meant for tests over small data sets. */
  list(processId?: number): InstanceState[] {
    const source = processId === undefined ? [...this.byId.values()] : (this.byProcess.get(processId) ?? []);
    return source.map(cloneState);
  }

  ids(processId?: number): number[] {
    const source = processId === undefined ? [...this.byId.values()] : (this.byProcess.get(processId) ?? []);
    return source.map((i) => i.id);
  }

  status(id: number): InstanceStatus | undefined {
    const inst = this.byId.get(id);
    return inst ? statusOf(inst) : undefined;
  }

  /** The instance as GET /instances/{id}/ renders it. */
  record(id: number, opts: RecordOptions = {}): InstanceRecord | undefined {
    const inst = this.byId.get(id);
    return inst ? instanceRecord(inst, this.currentUrls, opts) : undefined;
  }

  /** @internal live state, for the handlers: never mutate it outside `update`. */
  peek(id: number): Readonly<InstanceState> | undefined {
    return this.byId.get(id);
  }

  /** @internal the instance behind a public tracking token (tokens never change, so the index is built once). */
  byPublicToken(token: string): Readonly<InstanceState> | undefined {
    if (!this.tokenIndex) this.tokenIndex = new Map([...this.byId.values()].map((i) => [i.publicToken, i.id]));
    const id = this.tokenIndex.get(token);
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** @internal live instances of one workflow in id order. */
  peekProcess(processId: number): readonly InstanceState[] {
    return this.byProcess.get(processId) ?? [];
  }

  /**
   * Changes one instance in place. Use for outside edits in tests. Throws when the id is unknown. The id and the
   * workflow of an instance must not be changed.
   */
  update(id: number, mutate: (inst: InstanceState) => void, opts: { touch?: boolean } = {}): InstanceState {
    const inst = this.byId.get(id);
    if (!inst) throw new Error(`no instance ${id}`);
    const { id: before, processId } = inst;
    mutate(inst);
    if (inst.id !== before || inst.processId !== processId) throw new Error("update must not change id or processId");
    if (opts.touch !== false) inst.lastUpdatedTime = Math.max(this.nowMs(), (inst.lastUpdatedTime ?? 0) + 1);
    this.changed(inst);
    return cloneState(inst);
  }

  /** Sets (or with undefined/null clears) one form-field value, as an outside edit. */
  setValue(id: number, actionId: number, inputObject: unknown): InstanceState {
    return this.update(id, (inst) => {
      if (inputObject === undefined || inputObject === null) inst.values.delete(actionId);
      else inst.values.set(actionId, structuredClone(inputObject));
    });
  }

  /**
   * Saves values into an active step and, with mode "complete", completes it: the next step by position becomes active,
   * or after the last step the instance is completed. Throws StateError when the instance is not running, the step is
   * not active, or an action does not belong to the step. Permission is the caller's business.
   */
  applyStep(id: number, stepId: number, actions: readonly StepAction[], mode: "save" | "complete"): InstanceState {
    const inst = this.byId.get(id);
    if (!inst) throw new Error(`no instance ${id}`);
    const workflow = workflowOf(inst.processId);
    const step = stepInWorkflow(workflow, stepId);
    if (!step) throw new StateError(`Step ${stepId} is not a step of workflow ${workflow.id} ("${workflow.name}").`);
    const status = statusOf(inst);
    if (status !== "running") throw new StateError(`Instance ${id} is not running (status: ${status}).`);
    if (!inst.activeStepIds.includes(stepId)) {
      const active = inst.activeStepIds.length ? inst.activeStepIds.join(", ") : "none";
      throw new StateError(`Step ${stepId} is not active in instance ${id} (active steps: ${active}).`);
    }
    const unknown = actions.filter((a) => !step.actions.some((x) => x.id === a.action_id)).map((a) => a.action_id);
    if (unknown.length) {
      const allowed = step.actions.map((a) => a.id).join(", ");
      throw new StateError(
        `Action id(s) ${unknown.join(", ")} do not belong to step ${stepId} (its actions: ${allowed}).`,
      );
    }
    return this.update(id, (draft) => {
      for (const a of actions) {
        if (a.input_object === null || a.input_object === undefined) draft.values.delete(a.action_id);
        else draft.values.set(a.action_id, structuredClone(a.input_object));
      }
      if (mode === "complete") this.completeInPlace(draft, step);
    });
  }

  /** Aborts a running instance; returns false (and changes nothing) when it is not running. */
  abort(id: number): boolean {
    const inst = this.byId.get(id);
    if (!inst || statusOf(inst) !== "running") return false;
    this.update(id, (draft) => {
      draft.abortedTime = this.nowMs();
      draft.activeStepIds = [];
      draft.stepDeadlines.clear();
    });
    return true;
  }

  /**
   * The sorted view of one workflow's instances for an ordering, cached until the next change. `asOf` only matters
   * for total_runtime (running instances run until then).
   */
  sorted(processId: number, order: readonly OrderField[], asOf: number): SortedView {
    const key = `${processId}|${orderingKey(order)}|${usesRuntime(order) ? asOf : ""}`;
    let cached = this.sortCache.get(key);
    if (!cached) {
      cached = {
        processId,
        order: [...order],
        asOf,
        view: buildSorted(this.byProcess.get(processId) ?? [], order, asOf),
      };
      if (this.sortCache.size >= MAX_CACHED_ORDERS) {
        const oldest = this.sortCache.keys().next();
        if (!oldest.done) this.sortCache.delete(oldest.value);
      }
      this.sortCache.set(key, cached);
    }
    return cached.view;
  }

  private completeInPlace(inst: InstanceState, step: CatalogStep): void {
    const now = this.nowMs();
    inst.stepCompletedTimes.set(step.id, now);
    inst.activeStepIds = inst.activeStepIds.filter((s) => s !== step.id);
    inst.stepDeadlines.delete(step.id);
    if (inst.activeStepIds.length > 0) return; // another step is still active (not in the demo data)
    const steps = orderedSteps(workflowOf(inst.processId));
    const next = steps.find((s) => s.position > step.position && !inst.stepCompletedTimes.has(s.id));
    const workflow = workflowOf(inst.processId);
    if (next) {
      inst.activeStepIds = [next.id];
      if (!inst.reachedStepIds.includes(next.id)) inst.reachedStepIds.push(next.id);
      inst.stage = workflow.stages[steps.indexOf(next)] ?? inst.stage;
    } else {
      inst.completedTime = now;
    }
  }

  /** Keeps cached sort orders correct after one instance changed. */
  private changed(inst: InstanceState): void {
    this.currentVersion++;
    for (const cached of this.sortCache.values()) {
      if (cached.processId === inst.processId) repositionInView(cached.view, inst, cached.order, cached.asOf);
    }
  }
}
