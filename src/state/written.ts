/**
 * What the answer of our own complete_step/save_step is, as a cached record (write-through: docs/operating.md, "State between runs").
 * The spec says it is "the updated instance record" (docs/service.md) and leaves open whether its snapshot carries
 * input values (as a read with inject_values=true) or step completion times (steps_time_frame=true). The choice,
 * on the safe side: it stands for the read whose shape it has, and only when that is beyond doubt —
 * - input values: some action of its snapshot carries `input_object`, and every value we sent is there as sent
 *   (a service that rewrote one, 12.5 into "12.50", answers what a read would say, but not what we can vouch for);
 * - step times: some step carries `completed_time`.
 * An answer that shows neither values nor the values we sent stands for nothing: the next run reads the record if it
 * needs it. Pure: no I/O.
 */
import type { CompleteStepBody, InstanceRecord } from "../api/index.js";
import { canonicalJson } from "../plan/digest.js";
import { isRecord } from "../model/guards.js";

/** The read options ("v", "vt", "t", "") the answer stands for; undefined when it cannot be told. */
export function writtenFlags(record: InstanceRecord, sent: CompleteStepBody): string | undefined {
  const snap = record.process_snapshot;
  if (!isRecord(snap) || !Array.isArray(snap.steps)) return undefined;
  const values = new Map<number, string>();
  let times = false;
  for (const step of snap.steps) {
    if (!isRecord(step)) continue;
    if ("completed_time" in step) times = true;
    if (!Array.isArray(step.actions)) continue;
    for (const a of step.actions) {
      if (isRecord(a) && typeof a.id === "number" && "input_object" in a)
        values.set(a.id, canonicalJson(a.input_object));
    }
  }
  if (values.size === 0) return undefined;
  for (const a of sent.actions ?? []) {
    // a null clears the field: the snapshot then shows no value for it
    if (a.input_object === null || a.input_object === undefined) {
      if (values.has(a.action_id)) return undefined;
      continue;
    }
    if (values.get(a.action_id) !== canonicalJson(a.input_object)) return undefined;
  }
  return times ? "vt" : "v";
}
