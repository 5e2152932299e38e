/**
 * Deterministic demo instances over the fixed catalogue.
 *
 * Each instance draws from its own PRNG stream seeded by (seed, id), so instance 100123 is the same whatever the total
 * count: `--instances 200` yields exactly the first 200 instances of `--instances 100000` with the same seed.
 * Times are offsets before `now` (up to ~180 days back), so relative filters such as `-P30D` match something.
 */
import { TAG_POOL, WORKFLOWS, type CatalogAction, type CatalogStep, type CatalogWorkflow } from "./catalog.js";
import { orderedSteps } from "./lookup.js";
import { Prng, mixSeed } from "./prng.js";
import type { InstanceState, Priority } from "./state.js";

export const FIRST_INSTANCE_ID = 100001;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Expense claim gets the largest share: it is the workflow of the demo rules. */
const WORKFLOW_SHARES: readonly (readonly [CatalogWorkflow, number])[] = WORKFLOWS.map((w) => [
  w,
  ({ 1042: 40, 1043: 20, 1044: 25, 1045: 15 } as Record<number, number>)[w.id] ?? 10,
]);

export const FIRST_NAMES = [
  "Alice",
  "Bruno",
  "Chloé",
  "Dmitri",
  "Elena",
  "Farid",
  "Grace",
  "Hiro",
  "Ines",
  "Jonas",
  "Kemal",
  "Lena",
  "Marco",
  "Nadia",
  "Oskar",
  "Priya",
  "Quentin",
  "Rosa",
  "Sven",
  "Tara",
  "Umar",
  "Vera",
  "Wei",
  "Yara",
  "Zoe",
];
export const LAST_NAMES = [
  "Andersen",
  "Bianchi",
  "Costa",
  "Dubois",
  "Evans",
  "Fischer",
  "García",
  "Hansen",
  "Ivanova",
  "Jensen",
  "Kowalski",
  "Laurent",
  "Müller",
  "Novak",
  "Okafor",
  "Petrov",
  "Rossi",
  "Schmidt",
  "Tanaka",
  "Weber",
];

/** Text values by field name; other text fields use GENERIC_TEXT. */
const TEXT_POOLS: Record<string, readonly string[]> = {
  Description: [
    "Taxi to the airport",
    "Client dinner",
    "Train to Lyon",
    "Conference ticket",
    "Hotel, two nights",
    "Replacement keyboard",
    "Team lunch",
    "Parking at HQ",
  ],
  "Manager comment": ["OK", "Approved, thanks", "Please attach the receipt next time", "Fine"],
  Notes: ["Needs a second monitor", "Mac preferred", "Remote worker, ship to home", "Standard kit"],
  Buddy: FIRST_NAMES,
  Item: ["Office chairs", "Laptop stand", "Whiteboard", "Printer toner", "USB-C hubs", "Standing desk"],
  Comment: ["Within budget", "Over budget, postpone", "Urgent for Q4", "Fine"],
  Justification: ["Needed for month-end close", "New role", "Project onboarding", "Audit support"],
};
/** Amount and Currency of an expense claim: nearly always filled, so the demo rules have data to decide on. */
const KEY_FIELDS = new Set([50222, 50223]);
const GENERIC_TEXT = ["See attachment", "Done", "n/a", "Follow-up needed"];

export interface GenerateOptions {
  seed: number;
  count: number;
  /** epoch ms the data is generated relative to */
  now: number;
}

export function generateInstances(opts: GenerateOptions): InstanceState[] {
  const out: InstanceState[] = new Array<InstanceState>(opts.count);
  for (let i = 0; i < opts.count; i++) out[i] = generateOne(FIRST_INSTANCE_ID + i, opts.seed, opts.now);
  return out;
}

/** Opaque, stable token of an instance's public tracking URL. */
export function publicToken(seed: number, id: number): string {
  return mixSeed(seed, id).toString(16).padStart(8, "0") + mixSeed(id, seed).toString(16).padStart(8, "0");
}

function generateOne(id: number, seed: number, now: number): InstanceState {
  const rnd = new Prng(mixSeed(seed, id));
  const workflow = rnd.weighted(WORKFLOW_SHARES);
  const steps = orderedSteps(workflow);
  const status = rnd.weighted([
    ["running", 60],
    ["completed", 25],
    ["aborted", 15],
  ] as const);
  const person = `${rnd.pick(FIRST_NAMES)} ${rnd.pick(LAST_NAMES)}`;
  const startedTime = now - rnd.int(10 * MINUTE, 180 * DAY);
  const age = now - startedTime;

  // Which step the instance is at (running), stopped at (aborted), or past the last one (completed).
  let atIndex: number;
  if (status === "completed") atIndex = steps.length;
  else if (workflow.id === 1042 && status === "running")
    atIndex = rnd.weighted([
      [0, 20],
      [1, 60],
      [2, 20],
    ] as const);
  else atIndex = rnd.int(0, steps.length - 1);

  // End (completed/aborted) or last change (running) somewhere after the start.
  const endTime = status === "running" ? null : startedTime + Math.floor(age * (0.05 + 0.9 * rnd.next()));
  const neverTouched = status === "running" && atIndex === 0 && rnd.chance(0.3);
  const lastTouch = endTime ?? (neverTouched ? null : startedTime + Math.floor(age * (0.1 + 0.85 * rnd.next())));

  // Completed steps at increasing times between the start and the last change.
  const stepCompletedTimes = new Map<number, number>();
  const span = (lastTouch ?? startedTime) - startedTime;
  for (let k = 0; k < Math.min(atIndex, steps.length); k++) {
    const step = steps[k] as CatalogStep;
    const t =
      status === "completed" && k === steps.length - 1
        ? (endTime as number)
        : startedTime + Math.floor((span * (k + 1)) / (atIndex + 1));
    stepCompletedTimes.set(step.id, t);
  }
  const current = steps[atIndex];
  const reachedStepIds = steps.slice(0, Math.min(atIndex + 1, steps.length)).map((s) => s.id);
  const activeStepIds = status === "running" && current ? [current.id] : [];

  const stepDeadlines = new Map<number, number>();
  if (status === "running" && current && rnd.chance(0.6)) {
    const activated =
      atIndex === 0 ? startedTime : (stepCompletedTimes.get((steps[atIndex - 1] as CatalogStep).id) ?? startedTime);
    stepDeadlines.set(current.id, activated + rnd.int(1, 14) * DAY + rnd.int(0, 23) * HOUR);
  }

  const values = new Map<number, unknown>();
  if (!neverTouched) {
    for (let k = 0; k < reachedStepIds.length; k++) {
      const step = steps[k] as CatalogStep;
      const isCurrent = k === atIndex && status !== "completed";
      step.actions.forEach((action, j) => {
        // On the step still waiting, only the first fields tend to be filled (the rest are the approver's).
        const p = KEY_FIELDS.has(action.id) ? 0.95 : isCurrent && j >= 2 ? 0.15 : 0.85;
        if (rnd.chance(p)) values.set(action.id, valueFor(action, rnd, startedTime));
      });
    }
  }

  const tags = drawTags(workflow, rnd);
  const priority: Priority = rnd.weighted([
    [null, 70],
    ["H", 20],
    ["V", 10],
  ] as const);
  const deadline = rnd.chance(0.65) ? startedTime + rnd.int(2, 60) * DAY + rnd.int(0, 23) * HOUR : null;
  const stageIndex = Math.min(atIndex, steps.length - 1);
  const visibilityTeams = workflow.visibility_mode === "restrictive" ? rnd.sample([10, 11, 12, 13], rnd.int(1, 2)) : [];

  return {
    id,
    processId: workflow.id,
    name: `${workflow.name} #${id} — ${person}`,
    startedTime,
    completedTime: status === "completed" ? endTime : null,
    abortedTime: status === "aborted" ? endTime : null,
    lastUpdatedTime: lastTouch,
    deadline,
    priority,
    tags,
    stage: workflow.stages[stageIndex] ?? "",
    visibilityMode: workflow.visibility_mode,
    visibilityTeams,
    publicToken: publicToken(seed, id),
    activeStepIds,
    reachedStepIds,
    stepCompletedTimes,
    stepDeadlines,
    values,
  };
}

export function drawTags(workflow: CatalogWorkflow, rnd: Prng): string[] {
  const tags = new Set<string>();
  // Expense claims mostly carry "expenses", so the demo rule's `tags: [expenses]` selects a good share.
  if (workflow.id === 1042 && rnd.chance(0.7)) tags.add("expenses");
  const extra = rnd.int(0, tags.size ? 2 : 3);
  for (const t of rnd.sample(TAG_POOL, extra)) if (tags.size < 3) tags.add(t);
  return [...tags];
}

export function valueFor(action: CatalogAction, rnd: Prng, startedTime: number): unknown {
  switch (action.type) {
    case "text":
      return { inputValue: rnd.pick(TEXT_POOLS[action.name] ?? GENERIC_TEXT) };
    case "number":
      return { inputValue: numberFor(action.name, rnd) };
    case "date":
      return { date: new Date(startedTime + rnd.int(0, 30) * DAY).toISOString() };
    case "radio":
      return { inputValue: { radioItemSelected: radioFor(action, rnd) } };
    case "checklist": {
      const options = action.options ?? [];
      const checked = rnd.sample(options, rnd.int(0, options.length));
      return { inputValue: { itemsChecked: checked, itemsNotChecked: options.filter((o) => !checked.includes(o)) } };
    }
  }
}

function numberFor(name: string, rnd: Prng): number {
  const cents = (lo: number, hi: number): number => rnd.int(lo * 100, hi * 100) / 100;
  switch (name) {
    case "Amount": // about half under 100, so "approve small expenses" matches a good share
      return rnd.chance(0.55) ? cents(5, 99) : cents(100, 2500);
    case "Quantity":
      return rnd.int(1, 20);
    case "Unit price":
      return cents(5, 1500);
    case "Risk score":
      return rnd.int(1, 10);
    default:
      return rnd.int(0, 1000);
  }
}

function radioFor(action: CatalogAction, rnd: Prng): string {
  const options = action.options ?? [];
  // EUR dominates the currency field for the same reason as Amount above.
  if (action.name === "Currency")
    return rnd.weighted([
      ["EUR", 70],
      ["USD", 18],
      ["GBP", 12],
    ] as const);
  return rnd.pick(options);
}
