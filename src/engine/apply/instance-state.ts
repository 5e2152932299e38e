/** Small readings of a full instance record (spec 2.3), shared by the staleness check and the verification. */
import type { ApiClient, InstanceRecord } from "../../api/index.js";

export type Status = "running" | "completed" | "aborted";

/** The record has no status field (spec 2.3): it follows from its end times. */
export function statusOf(record: InstanceRecord): Status {
  if (record.aborted_time) return "aborted";
  if (record.completed_time) return "completed";
  return "running";
}

export function activeSteps(record: InstanceRecord): number[] {
  return record.active_step_ids ?? [];
}

/** "completed at 2024-…", "aborted at …" or "running". */
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

/**
 * One read that answers every question apply asks of an instance: input values (did a save take effect?) and step
 * completion times (was the step completed, or the instance aborted before it?).
 */
export function readForCheck(client: ApiClient, id: number): Promise<InstanceRecord> {
  return client.getInstance(id, { injectValues: true, stepsTimeFrame: true });
}
