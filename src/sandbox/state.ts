/**
 * The sandbox's internal instance record and the values derived from it.
 *
 * Times are epoch milliseconds (numbers compare and sort fast over 100,000 instances); the API renders them as ISO
 * 8601 UTC strings. Status is not stored: like the service, it follows from completed_time / aborted_time.
 */
import type { CatalogWorkflow } from "./catalog.js";
import { workflowOf } from "./lookup.js";

export type InstanceStatus = "running" | "completed" | "aborted";
export const STATUSES: readonly InstanceStatus[] = ["running", "completed", "aborted"];
export type Priority = "H" | "V" | null;
export type VisibilityMode = CatalogWorkflow["visibility_mode"];

export interface InstanceState {
  id: number;
  /** workflow id */
  processId: number;
  name: string;
  startedTime: number;
  completedTime: number | null;
  abortedTime: number | null;
  /** null until the instance is first changed after its start */
  lastUpdatedTime: number | null;
  deadline: number | null;
  priority: Priority;
  tags: string[];
  stage: string;
  visibilityMode: VisibilityMode;
  visibilityTeams: number[];
  /** opaque token of the public status-tracking URL ({origin}/track/<token>) */
  publicToken: string;
  /** active steps; empty once the instance is completed or aborted */
  activeStepIds: number[];
  /** every step that was ever active (completed, active, or active when aborted): drives "involved" visibility */
  reachedStepIds: number[];
  /** step id → completion time */
  stepCompletedTimes: Map<number, number>;
  /** step id → deadline, for active steps that have one */
  stepDeadlines: Map<number, number>;
  /** action (form field) id → input_object as stored; absent when the field holds no value */
  values: Map<number, unknown>;
}

export function statusOf(inst: InstanceState): InstanceStatus {
  if (inst.abortedTime !== null) return "aborted";
  if (inst.completedTime !== null) return "completed";
  return "running";
}

/** Share of the workflow's steps completed, 0–100, rounded down; a completed instance is 100. */
export function progressOf(inst: InstanceState): number {
  if (inst.completedTime !== null && inst.abortedTime === null) return 100;
  const total = workflowOf(inst.processId).steps.length;
  return total === 0 ? 0 : Math.floor((100 * inst.stepCompletedTimes.size) / total);
}

/** completed_time or aborted_time, whichever ended the instance; null while running */
export function endedTimeOf(inst: InstanceState): number | null {
  return inst.abortedTime ?? inst.completedTime;
}

/** Run time in ms: until the end for ended instances, until `asOf` for running ones. */
export function runtimeOf(inst: InstanceState, asOf: number): number {
  return Math.max(0, (endedTimeOf(inst) ?? asOf) - inst.startedTime);
}

export function cloneState(inst: InstanceState): InstanceState {
  return {
    ...inst,
    tags: [...inst.tags],
    visibilityTeams: [...inst.visibilityTeams],
    activeStepIds: [...inst.activeStepIds],
    reachedStepIds: [...inst.reachedStepIds],
    stepCompletedTimes: new Map(inst.stepCompletedTimes),
    stepDeadlines: new Map(inst.stepDeadlines),
    values: new Map([...inst.values].map(([k, v]) => [k, structuredClone(v)])),
  };
}
