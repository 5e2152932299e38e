/**
 * Input objects → plain values for `fields.*` (docs/writing-rules.md): text/number `{inputValue: v}` → v, date
 * `{date}` → the ISO string, radio → the selected option, checklist → the checked items; any other shape is passed
 * through as stored. "No value" is ABSENT (undefined), never null, so `fields.amount < 100` is simply false.
 */

import { canonicalInput, type FieldType } from "../model/values.js";
import { isRecord } from "./guards.js";

/** `type`, when known, reads the value as that field's type: a decimal string ("12.50") in a number field is 12.5. */
export function plainValue(stored: unknown, type?: FieldType): unknown {
  const inputObject = canonicalInput(stored, type);
  if (inputObject === null || inputObject === undefined) return undefined;
  if (!isRecord(inputObject)) return inputObject;
  if (Object.keys(inputObject).length === 0) return undefined;
  if ("date" in inputObject && Object.keys(inputObject).length === 1) {
    return inputObject.date ?? undefined;
  }
  if ("inputValue" in inputObject) {
    const v = inputObject.inputValue;
    if (v === null || v === undefined) return undefined;
    if (isRecord(v)) {
      if ("radioItemSelected" in v) return v.radioItemSelected ?? undefined;
      if ("itemsChecked" in v) return Array.isArray(v.itemsChecked) ? v.itemsChecked : undefined;
    }
    return v;
  }
  return inputObject;
}

/** Key of one form field in the per-instance value maps. */
export function fieldKey(step: number, action: number): string {
  return `${step}:${action}`;
}
