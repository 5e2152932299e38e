/**
 * Did a change take effect? Decided from the instance's state alone, when a request's outcome is unknown (the
 * connection broke, a gateway answered 5xx) or a journal shows an intent without an outcome. Nothing is re-sent
 * before this says "no". Each action kind judges its own changes (src/actions).
 */
import { mutatingKind, type Effect } from "../actions/index.js";
import type { InstanceRecord } from "../api/index.js";
import type { PlannedChange } from "../plan/types.js";

export type { Effect };

export function effectOf(change: PlannedChange, record: InstanceRecord): Effect {
  return mutatingKind(change.kind).effect(change, record);
}
