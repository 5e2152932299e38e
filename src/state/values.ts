/**
 * Form-field values of a few changed instances, from their records (docs/performance.md, "A busy tenant"): the state
 * answers every unchanged instance's values, so what a run still asks is the changed few; one read of an instance
 * with `inject_values` carries every field of it (the form-field record's `value` has the forms of the snapshot's
 * `input_object`: src/api/schemas.ts), where the form-field endpoint costs one page per field. Used when the changed
 * instances are fewer than the workflow's fields the state knows of (or their records were read already this run);
 * the records read go into the next state as any record read. Functions run with the client as `this`.
 */
import type { FormFieldValue, InstanceRecord } from "../api/index.js";
import { isRecord } from "../model/guards.js";
import { VALUE_RECORDS_KEPT } from "./records.js";
import type { RunWorkflow, StateRun } from "./run.js";

/** Whether reading the records of `ids` costs fewer requests than one form-field page for each field of the workflow. */
export function cheaperByRecords(this: StateRun, w: RunWorkflow, ids: readonly number[]): boolean {
  const unread = ids.filter((id) => !this.valueRecords.has(id)).length;
  if (unread === 0) return true;
  let fields = this.fieldsOf.get(w.pid);
  if (fields === undefined) {
    fields = 0;
    for (const key of this.prev?.fields.keys() ?? []) if (key.startsWith(`${w.pid}:`)) fields++;
    this.fieldsOf.set(w.pid, fields);
  }
  return unread < fields;
}

/** The record with values of one instance, read once a run however many fields ask for it. */
function recordWithValues(this: StateRun, id: number): Promise<InstanceRecord> {
  let p = this.valueRecords.get(id);
  if (!p) {
    p = this.getInstance(id, { injectValues: true });
    if (this.valueRecords.size < VALUE_RECORDS_KEPT) {
      p.catch(() => this.valueRecords.delete(id));
      this.valueRecords.set(id, p);
    }
  }
  return p;
}

/**
 * The form-field records of a field for these instances, as the form-field endpoint gives them, from their records
 * read with values (null: no value there); undefined when a record does not show the field (another structure, a
 * value of a form that is not an object): then the field's pages are asked.
 */
export async function valuesByRecords(
  this: StateRun,
  stepId: number,
  actionId: number,
  ids: readonly number[],
): Promise<Map<number, FormFieldValue | null> | undefined> {
  const records = await Promise.all(ids.map((id) => recordWithValues.call(this, id)));
  const out = new Map<number, FormFieldValue | null>();
  for (const [i, record] of records.entries()) {
    const id = ids[i] as number;
    if (record.id !== id) return undefined;
    const step = record.process_snapshot?.steps?.find((s) => s.id === stepId);
    const action = step?.actions?.find((a) => a.id === actionId);
    if (!action) return undefined;
    const input: unknown = action.input_object;
    if (input === undefined || input === null) {
      out.set(id, null);
      continue;
    }
    if (!isRecord(input)) return undefined;
    const settings = isRecord(action.settings) ? action.settings : {};
    out.set(id, {
      instance_id: id,
      instance_name: typeof record.name === "string" ? record.name : null,
      value: input,
      settings: {
        step_id: stepId,
        action_id: actionId,
        ...(typeof action.name === "string" ? { name: action.name } : {}),
        ...settings,
        ...(typeof action.type === "string" ? { type: action.type } : {}),
      },
    });
  }
  return out;
}
