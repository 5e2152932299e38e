/** Readings of a full instance record shared by the staleness check and the verification, and the one read for both. */
import type { ApiClient, InstanceRecord } from "../api/index.js";

export { activeSteps, describeStatus, statusOf, timeOf } from "../actions/instance.js";

/**
 * One read that answers every question apply asks of an instance: input values (did a save take effect?) and step
 * completion times (was the step completed, or the instance aborted before it?).
 */
export function readForCheck(client: ApiClient, id: number): Promise<InstanceRecord> {
  return client.getInstance(id, { injectValues: true, stepsTimeFrame: true });
}
