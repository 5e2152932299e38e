/**
 * Did a change take effect? Decided from the instance's state alone, when a request's outcome is unknown (the
 * connection broke, a gateway answered 5xx) or a journal shows an intent without an outcome. Nothing is re-sent
 * before this says "no".
 *
 * - complete_step: the step is no longer active and was completed (its completed_time, with steps_time_frame=true),
 *   or — when the snapshot carries no times — the instance moved on without being aborted.
 * - save_step: every input_object sent equals the one in the snapshot (read with inject_values=true).
 * - abort: aborted_time is set.
 */
import type { InstanceRecord, SnapshotStep } from "../../api/index.js";
import { fieldTypeOf, sameValue } from "../../model/values.js";
import { activeSteps, statusOf } from "./instance-state.js";
import type { ApplyChange } from "./plan-file.js";

export interface Effect {
  applied: boolean;
  /** what the record showed, for the journal and messages */
  detail: string;
}

interface SentAction {
  action_id: number;
  input_object: unknown;
}

function sentActions(change: ApplyChange): SentAction[] {
  const body = change.request.body;
  if (typeof body !== "object" || body === null || !("actions" in body)) return [];
  const actions = (body as { actions?: unknown }).actions;
  return Array.isArray(actions) ? (actions as SentAction[]) : [];
}

function snapshotStep(record: InstanceRecord, stepId: number): SnapshotStep | undefined {
  return record.process_snapshot?.steps?.find((s) => s.id === stepId);
}


export function effectOf(change: ApplyChange, record: InstanceRecord): Effect {
  if (change.kind === "abort") {
    return record.aborted_time
      ? { applied: true, detail: `aborted at ${record.aborted_time}` }
      : { applied: false, detail: `not aborted (${statusOf(record)})` };
  }
  const stepId = change.step_id ?? -1;
  const step = snapshotStep(record, stepId);
  if (change.kind === "complete_step") {
    if (activeSteps(record).includes(stepId)) return { applied: false, detail: `step ${stepId} is still active` };
    if (step?.completed_time) return { applied: true, detail: `step ${stepId} completed at ${step.completed_time}` };
    if (step && "completed_time" in step) return { applied: false, detail: `step ${stepId} is not active and was not completed` };
    // no completion times in the snapshot: judge by the instance moving on
    return statusOf(record) === "aborted"
      ? { applied: false, detail: `the instance was aborted` }
      : { applied: true, detail: `step ${stepId} is no longer active` };
  }
  // save_step
  const actions = step?.actions ?? [];
  for (const sent of sentActions(change)) {
    const action = actions.find((a) => a.id === sent.action_id);
    // by meaning: the service may store the value in its own format ("12.50", "+00:00" with microseconds, a plain
    // radio string); null, undefined and absent all mean "no value" (sending null clears a field)
    if (!sameValue(sent.input_object, action?.input_object, fieldTypeOf(action?.type, action?.settings))) return { applied: false, detail: `action ${sent.action_id} does not hold the value sent` };
  }
  return { applied: true, detail: `step ${stepId} holds every value sent` };
}
