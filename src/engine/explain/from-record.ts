/**
 * A full instance record (GET /instances/{id}/?inject_values=true) → the engine's InstanceData: status derived from
 * the record's times (the full record has none), workflow id from the `process` URI, every injected form-field value.
 */
import type { InstanceRecord } from "../../api/schemas.js";
import { canonicalInput, fieldTypeOf } from "../../model/values.js";
import { fieldKey } from "../../model/field-values.js";
import { statusFromRecord, type InstanceData } from "../../actions/instance.js";

/** `{base_url}/processes/1042/` → 1042; the snapshot's id when the URI says nothing usable. */
export function workflowIdOf(record: InstanceRecord): number | undefined {
  const m = /\/processes\/(\d+)\/?(?:[?#].*)?$/.exec(record.process ?? "");
  if (m?.[1]) return Number(m[1]);
  const id = record.process_snapshot?.id;
  return typeof id === "number" ? id : undefined;
}

export function snapshotValues(record: InstanceRecord): Map<string, unknown> {
  const values = new Map<string, unknown>();
  for (const step of record.process_snapshot?.steps ?? []) {
    // an action without input_object was read and holds no value: present with undefined ("read, no value")
    for (const action of step.actions ?? []) {
      const stored = canonicalInput(action.input_object ?? undefined, fieldTypeOf(action.type, action.settings));
      values.set(fieldKey(step.id, action.id), stored);
    }
  }
  return values;
}

export function instanceFromRecord(record: InstanceRecord, processId: number): InstanceData {
  return {
    id: record.id,
    name: record.name ?? "",
    status: statusFromRecord(record),
    ...(record.public_url !== undefined ? { public_url: record.public_url } : {}),
    process_id: processId,
    record,
    values: snapshotValues(record),
  };
}
