/** API shapes (docs/service.md, "Resources") built from the internal state. Key order follows the spec's tables. */
import type { CatalogAction, CatalogWorkflow } from "./catalog.js";
import { toIso } from "./dates.js";
import { orderedSteps, workflowOf } from "./lookup.js";
import { statusOf, type InstanceState, type InstanceStatus } from "./state.js";

export interface Urls {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** http://127.0.0.1:PORT/api */
  baseUrl: string;
}

export interface WorkflowRecord {
  id: number;
  name: string;
  description: string;
  url: string;
  folder: { id: number; name: string };
}

export interface ListElement {
  id: number;
  name: string;
  status: InstanceStatus;
  public_url: string;
}

export interface SnapshotAction {
  id: number;
  name: string;
  type: string;
  settings: Record<string, unknown>;
  input_object?: unknown;
}

export interface SnapshotStep {
  id: number;
  name: string;
  position: number;
  type: string;
  completed_time?: string | null;
  actions: SnapshotAction[];
}

export interface ProcessSnapshot {
  id: number;
  name: string;
  steps: SnapshotStep[];
}

/** The full record (2.3). It has no `status` key, as in the spec. */
export interface InstanceRecord {
  process: string;
  url: string;
  id: number;
  started_time: string;
  completed_time: string | null;
  aborted_time: string | null;
  last_updated_time: string;
  process_snapshot: ProcessSnapshot;
  active_step_ids: number[];
  step_deadlines: { step_id: number; deadline: string }[];
  public_url: string;
  stage: string;
  visibility_mode: string;
  name: string;
  deadline: string | null;
  priority: "H" | "V" | null;
  tags: string[];
  step_assignments: { step_id: number; user_id: number }[];
  visibility_teams: number[];
}

export interface RecordOptions {
  injectValues?: boolean;
  stepsTimeFrame?: boolean;
}

export function workflowRecord(w: CatalogWorkflow, urls: Urls): WorkflowRecord {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    url: `${urls.baseUrl}/processes/${w.id}/`,
    folder: { id: w.folder.id, name: w.folder.name },
  };
}

export function publicUrl(inst: InstanceState, urls: Urls): string {
  return `${urls.origin}/track/${inst.publicToken}`;
}

export function listElement(inst: InstanceState, urls: Urls): ListElement {
  return { id: inst.id, name: inst.name, status: statusOf(inst), public_url: publicUrl(inst, urls) };
}

export function processSnapshot(inst: InstanceState, opts: RecordOptions): ProcessSnapshot {
  const workflow = workflowOf(inst.processId);
  return {
    id: workflow.id,
    name: workflow.name,
    steps: orderedSteps(workflow).map((step) => {
      const actions = step.actions.map((a) => snapshotAction(a, inst, opts));
      const base = { id: step.id, name: step.name, position: step.position, type: step.type };
      // key order as in docs/design.md ("process_snapshot"): completed_time (when asked for) before actions
      return opts.stepsTimeFrame
        ? { ...base, completed_time: toIso(inst.stepCompletedTimes.get(step.id) ?? null), actions }
        : { ...base, actions };
    }),
  };
}

function snapshotAction(action: CatalogAction, inst: InstanceState, opts: RecordOptions): SnapshotAction {
  const out: SnapshotAction = { id: action.id, name: action.name, type: action.type, settings: actionSettings(action) };
  if (opts.injectValues && inst.values.has(action.id)) out.input_object = structuredClone(inst.values.get(action.id));
  return out;
}

export function instanceRecord(inst: InstanceState, urls: Urls, opts: RecordOptions = {}): InstanceRecord {
  return {
    process: `${urls.baseUrl}/processes/${inst.processId}/`,
    url: `${urls.baseUrl}/instances/${inst.id}/`,
    id: inst.id,
    started_time: new Date(inst.startedTime).toISOString(),
    completed_time: toIso(inst.completedTime),
    aborted_time: toIso(inst.abortedTime),
    // string, date-time in the spec: an instance never changed was last updated when it started
    last_updated_time: new Date(inst.lastUpdatedTime ?? inst.startedTime).toISOString(),
    process_snapshot: processSnapshot(inst, opts),
    active_step_ids: [...inst.activeStepIds],
    step_deadlines: [...inst.stepDeadlines]
      .filter(([stepId]) => inst.activeStepIds.includes(stepId))
      .map(([step_id, deadline]) => ({ step_id, deadline: new Date(deadline).toISOString() })),
    public_url: publicUrl(inst, urls),
    stage: inst.stage,
    visibility_mode: inst.visibilityMode,
    name: inst.name,
    deadline: toIso(inst.deadline),
    priority: inst.priority,
    tags: [...inst.tags],
    step_assignments: [],
    visibility_teams: [...inst.visibilityTeams],
  };
}

/** A field's `settings` as the snapshot's shape shows them (docs/design.md, "process_snapshot"): label, type, required, and options when it has some. */
export function actionSettings(action: CatalogAction): Record<string, unknown> {
  const settings: Record<string, unknown> = {
    label: action.name,
    type: action.type,
    required: action.required ?? false,
  };
  if (action.options) settings.options = [...action.options];
  return settings;
}

/** `settings` of a form-field value record (2.4): the field's definition as the sandbox knows it. */
export function fieldSettings(action: CatalogAction, stepId: number): Record<string, unknown> {
  const settings: Record<string, unknown> = {
    step_id: stepId,
    action_id: action.id,
    name: action.name,
    ...actionSettings(action),
  };
  return settings;
}
