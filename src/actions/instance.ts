/**
 * What the engine knows about one instance: the list element always, the full record and form-field values when
 * hydration fetched them. Plain data so that the planner stays a pure function of (rules, instances, now).
 */
import type { InstanceRecord } from "../api/schemas.js";

export type InstanceStatus = "running" | "completed" | "aborted";

/** Record keys a filtered list can tell (`priority=V` / `priority=H` lists: null is Regular). */
export type KnownRecordKeys = Partial<Pick<InstanceRecord, "priority">>;

export interface InstanceData {
  id: number;
  name: string;
  status: InstanceStatus;
  public_url?: string | null;
  process_id: number;
  /** the full record (GET /instances/{id}/?inject_values=true), when read */
  record?: InstanceRecord;
  /** keys of the record learnt without reading it (from lists filtered by them), when the record is not read */
  known?: KnownRecordKeys;
  /** the record was needed and could not be taken as this instance's (why, in words): an error for this instance */
  unreadable?: string;
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

/** Status of a full record, derived from its times (the full record has no status field: docs/service.md, "Resources"). */
export function statusFromRecord(record: {
  completed_time?: string | null;
  aborted_time?: string | null;
}): InstanceStatus {
  if (record.aborted_time) return "aborted";
  if (record.completed_time) return "completed";
  return "running";
}

/** The record has no status field: it follows from its end times. */
export function statusOf(record: InstanceRecord): InstanceStatus {
  return statusFromRecord(record);
}

export function activeSteps(record: InstanceRecord): number[] {
  return record.active_step_ids ?? [];
}

/** "completed (at 2024-…)", "aborted (at …)" or "running". */
export function describeStatus(record: InstanceRecord): string {
  const s = statusOf(record);
  if (s === "aborted") return `aborted (at ${record.aborted_time ?? "?"})`;
  if (s === "completed") return `completed (at ${record.completed_time ?? "?"})`;
  return "running";
}

/** Epoch ms of an ISO time, or undefined. */
export function timeOf(iso: string | null | undefined): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}
