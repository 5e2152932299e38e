/**
 * What the engine knows about one instance: the list element always, the full record and form-field values when
 * hydration fetched them. Plain data so that the planner stays a pure function of (rules, instances, now).
 */
import type { InstanceRecord } from "../api/schemas.js";

export type InstanceStatus = "running" | "completed" | "aborted";

export interface InstanceData {
  id: number;
  name: string;
  status: InstanceStatus;
  public_url?: string | null;
  process_id: number;
  /** the full record (GET /instances/{id}/?inject_values=true), when read */
  record?: InstanceRecord;
  /**
   * raw input objects by `step:action` key; a key that is present with `undefined` means "read, no value".
   * Missing keys mean "not read" (the planner treats them as absent too).
   */
  values: Map<string, unknown>;
  /**
   * whether a step is active, for the steps the rule acts on, when learnt without reading the record (a filtered
   * list by active_step_id); the record's active_step_ids win when both are known
   */
  stepActive?: Map<number, boolean>;
}

/** Status of a full record, derived from its times (spec 2.3 has no status field). */
export function statusFromRecord(record: { completed_time?: string | null; aborted_time?: string | null }): InstanceStatus {
  if (record.aborted_time) return "aborted";
  if (record.completed_time) return "completed";
  return "running";
}
