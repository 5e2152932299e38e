/**
 * Simulated people working between two runs of flowrules (docs/sandbox.md, "People at work"): form values edited,
 * tags and priorities changed, steps completed, instances aborted or started, deadlines set to come due soon. Every
 * change goes through the store, so it bumps last_updated_time like a change made in the product would.
 *
 * Deterministic: the same store, seed and count make the same changes. `churn` is a share of the instances (0.01 =
 * one instance in a hundred changed); `changes` an exact number. The clock is moved separately (`advanceClock`).
 */
import { TAG_POOL, WORKFLOWS, type CatalogStep } from "./catalog.js";
import { FIRST_NAMES, LAST_NAMES, drawTags, publicToken, valueFor } from "./generate.js";
import { orderedSteps, workflowOf } from "./lookup.js";
import { Prng, mixSeed } from "./prng.js";
import type { InstanceState, Priority } from "./state.js";
import type { SandboxStore } from "./store.js";

export const PEOPLE_ACTIONS = [
  "edit-value",
  "edit-tags",
  "edit-priority",
  "complete-step",
  "abort",
  "start",
  "deadline-due",
] as const;
export type PeopleAction = (typeof PEOPLE_ACTIONS)[number];

export interface PeopleOptions {
  /** seed of the draws (default 1); use a new one for each round */
  seed?: number;
  /** share of the instances to change, 0–1 (default 0.01) */
  churn?: number;
  /** exact number of changes; wins over churn */
  changes?: number;
  /** which kinds of work to draw from (default all); weights are fixed, see WEIGHTS */
  kinds?: readonly PeopleAction[];
}

export interface PeopleResult {
  /** the sandbox clock when the work was done (ISO) */
  at: string;
  /** changes made, by kind */
  counts: Record<PeopleAction, number>;
  /** every instance changed or started, ascending, without duplicates */
  ids: number[];
  /** the instances started */
  started: number[];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const WEIGHTS: Readonly<Record<PeopleAction, number>> = {
  "edit-value": 30,
  "edit-tags": 12,
  "edit-priority": 6,
  "complete-step": 20,
  abort: 5,
  start: 15,
  "deadline-due": 12,
};

/** A person's change that needs a running instance falls back to this one on an ended instance. */
const FALLBACK = "edit-tags" as const;

export function checkPeopleOptions(opts: PeopleOptions): void {
  if (opts.seed !== undefined && !Number.isSafeInteger(opts.seed))
    throw new RangeError(`seed must be a whole number, got ${String(opts.seed)}`);
  if (opts.churn !== undefined && !(Number.isFinite(opts.churn) && opts.churn >= 0 && opts.churn <= 1)) {
    throw new RangeError(`churn must be a share from 0 to 1, got ${String(opts.churn)}`);
  }
  if (
    opts.changes !== undefined &&
    !(Number.isSafeInteger(opts.changes) && opts.changes >= 0 && opts.changes <= 1_000_000)
  ) {
    throw new RangeError(`changes must be a whole number from 0 to 1000000, got ${String(opts.changes)}`);
  }
  for (const k of opts.kinds ?? []) {
    if (!(PEOPLE_ACTIONS as readonly string[]).includes(k))
      throw new RangeError(`unknown kind of work "${k}"; known: ${PEOPLE_ACTIONS.join(", ")}`);
  }
  if (opts.kinds && opts.kinds.length === 0) throw new RangeError("kinds must name at least one kind of work");
}

export function simulatePeople(store: SandboxStore, opts: PeopleOptions = {}): PeopleResult {
  checkPeopleOptions(opts);
  const seed = opts.seed ?? 1;
  const rnd = new Prng(mixSeed(seed, store.size));
  const count = opts.changes ?? Math.round((opts.churn ?? 0.01) * store.size);
  const kinds = opts.kinds ?? PEOPLE_ACTIONS;
  const weights = kinds.map((k) => [k, WEIGHTS[k]] as const);
  const counts = Object.fromEntries(PEOPLE_ACTIONS.map((k) => [k, 0])) as Record<PeopleAction, number>;
  const ids = store.ids();
  const touched = new Set<number>();
  const started: number[] = [];
  for (let n = 0; n < count; n++) {
    const drawn: PeopleAction = ids.length === 0 ? "start" : rnd.weighted(weights);
    if (drawn === "start") {
      const id = startInstance(store, rnd, seed);
      started.push(id);
      ids.push(id);
      touched.add(id);
      counts.start++;
      continue;
    }
    let kind: Exclude<PeopleAction, "start"> = drawn;
    const id = rnd.pick(ids);
    const running = store.status(id) === "running";
    if (!running && (kind === "complete-step" || kind === "abort" || kind === "deadline-due")) kind = FALLBACK;
    work(store, rnd, id, kind);
    touched.add(id);
    counts[kind]++;
  }
  return { at: store.now().toISOString(), counts, ids: [...touched].sort((a, b) => a - b), started };
}

function work(store: SandboxStore, rnd: Prng, id: number, kind: Exclude<PeopleAction, "start">): void {
  const now = store.nowMs();
  switch (kind) {
    case "edit-value":
      store.update(id, (inst) => {
        const steps = orderedSteps(workflowOf(inst.processId)).filter((s) => inst.reachedStepIds.includes(s.id));
        const step = steps.length ? rnd.pick(steps) : undefined;
        const action = step && step.actions.length ? rnd.pick(step.actions) : undefined;
        if (!action) return;
        // now and then a value is cleared, so "a field with no value" comes and goes too
        if (rnd.chance(0.1)) inst.values.delete(action.id);
        else inst.values.set(action.id, valueFor(action, rnd, inst.startedTime));
      });
      return;
    case "edit-tags":
      store.update(id, (inst) => {
        const tag = rnd.pick(TAG_POOL);
        if (inst.tags.includes(tag)) inst.tags = inst.tags.filter((t) => t !== tag);
        else if (inst.tags.length < 3) inst.tags.push(tag);
        else inst.tags[rnd.int(0, inst.tags.length - 1)] = tag;
      });
      return;
    case "edit-priority":
      store.update(id, (inst) => {
        const options: Priority[] = [null, "H", "V"].filter((p) => p !== inst.priority) as Priority[];
        inst.priority = rnd.pick(options);
      });
      return;
    case "complete-step": {
      const inst = store.get(id);
      const stepId = inst?.activeStepIds[0];
      if (!inst || stepId === undefined) return;
      const step = orderedSteps(workflowOf(inst.processId)).find((s) => s.id === stepId) as CatalogStep;
      // the person fills one field of the step before completing it, as people do
      const action = step.actions.length ? rnd.pick(step.actions) : undefined;
      const actions = action ? [{ action_id: action.id, input_object: valueFor(action, rnd, inst.startedTime) }] : [];
      store.applyStep(id, stepId, actions, "complete");
      return;
    }
    case "abort":
      store.abort(id);
      return;
    case "deadline-due":
      store.update(id, (inst) => {
        // due within the next two hours: a later run, after the clock moved, finds it overdue
        inst.deadline = now + rnd.int(1, 120) * MINUTE;
        const active = inst.activeStepIds[0];
        if (active !== undefined && rnd.chance(0.5)) inst.stepDeadlines.set(active, now + rnd.int(1, 120) * MINUTE);
      });
      return;
  }
}

function startInstance(store: SandboxStore, rnd: Prng, seed: number): number {
  const workflow = rnd.pick(WORKFLOWS);
  const steps = orderedSteps(workflow);
  const first = steps[0];
  const now = store.nowMs();
  const id = store.nextId();
  const values = new Map<number, unknown>();
  for (const action of first?.actions.slice(0, 2) ?? [])
    if (rnd.chance(0.9)) values.set(action.id, valueFor(action, rnd, now));
  const stepDeadlines = new Map<number, number>();
  if (first && rnd.chance(0.6)) stepDeadlines.set(first.id, now + rnd.int(1, 14) * DAY);
  const inst: InstanceState = {
    id,
    processId: workflow.id,
    name: `${workflow.name} #${id} — ${rnd.pick(FIRST_NAMES)} ${rnd.pick(LAST_NAMES)}`,
    startedTime: now,
    completedTime: null,
    abortedTime: null,
    lastUpdatedTime: null,
    deadline: rnd.chance(0.65) ? now + rnd.int(1, 30) * DAY + rnd.int(0, 23) * HOUR : null,
    priority: rnd.weighted([
      [null, 70],
      ["H", 20],
      ["V", 10],
    ] as const),
    tags: drawTags(workflow, rnd),
    stage: workflow.stages[0] ?? "",
    visibilityMode: workflow.visibility_mode,
    visibilityTeams: workflow.visibility_mode === "restrictive" ? rnd.sample([10, 11, 12, 13], rnd.int(1, 2)) : [],
    publicToken: publicToken(seed ^ 0x5eed, id),
    activeStepIds: first ? [first.id] : [],
    reachedStepIds: first ? [first.id] : [],
    stepCompletedTimes: new Map(),
    stepDeadlines,
    values,
  };
  store.insert(inst);
  return id;
}
