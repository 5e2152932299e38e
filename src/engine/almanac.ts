/**
 * Facts fetched once per run, whichever rule asks first (after json-rules-engine's almanac): field values by
 * `step:action` and instance, and full records when more than one rule of a workflow needs them.
 */
import type { InstanceRecord } from "../api/schemas.js";
import { canonicalInput, fieldTypeOf, type FieldType } from "../model/values.js";
import { fieldKey } from "../model/field-values.js";
import { ValueTable } from "./value-table.js";

export { ABSENT } from "./value-table.js";

export interface Almanac {
  /** by field key, each instance's value (a compact table: ./value-table.ts) */
  values: Map<string, ValueTable>;
  records: Map<number, InstanceRecord>;
  /** each field's type as the service declared it (snapshot action `type`, form-field `settings.type`) */
  types: Map<string, FieldType>;
  /** instances whose record could not be taken as theirs (the service answered another id), with why */
  unreadable: Map<number, string>;
  /** instances whose kept record was read with step completion times (steps_time_frame=true) */
  timed: Set<number>;
  /**
   * what the run read for rollout started times (./started-times.ts): two rules over one selection (the two versions
   * of a rule in `plan --compare`) share one ordered listing, and a record is read once for both
   */
  started: {
    listings: Map<string, Promise<number[]>>;
    times: Map<number, Promise<string | null | undefined>>;
  };
}

export function newAlmanac(): Almanac {
  return {
    values: new Map(),
    records: new Map(),
    types: new Map(),
    unreadable: new Map(),
    timed: new Set(),
    started: { listings: new Map(), times: new Map() },
  };
}

/**
 * Stores a value in the documented form for its field's type (a service may send a number as "12.50", a radio value
 * as a plain string), so `fields.*`, "before" and the planner's comparisons all see one form.
 */
export function rememberValue(
  al: Almanac,
  key: string,
  instanceId: number,
  inputObject: unknown,
  type?: FieldType,
): void {
  if (type !== undefined) al.types.set(key, type);
  inputObject = canonicalInput(inputObject, type ?? al.types.get(key));
  let m = al.values.get(key);
  if (!m) {
    m = new ValueTable();
    al.values.set(key, m);
  }
  m.set(instanceId, inputObject);
}

/** Records every form-field value an injected snapshot carries, so no rule reads those fields again. */
export function rememberSnapshotValues(al: Almanac, record: InstanceRecord, knownKeys: Iterable<string>): void {
  const seen = new Set<string>();
  for (const step of record.process_snapshot?.steps ?? []) {
    for (const action of step.actions ?? []) {
      const key = fieldKey(step.id, action.id);
      seen.add(key);
      rememberValue(al, key, record.id, action.input_object, fieldTypeOf(action.type, action.settings));
    }
  }
  // a field the rule reads that the snapshot does not mention has no value in this instance
  for (const key of knownKeys) if (!seen.has(key)) rememberValue(al, key, record.id, undefined);
}
