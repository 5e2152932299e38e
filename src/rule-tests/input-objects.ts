/**
 * Plain fixture values → the input objects the service stores (docs/design.md, "process_snapshot"), so fixtures read like the data
 * and the engine still sees what it would see live: text/number `{inputValue}`, date `{date}`, radio
 * `{inputValue: {radioItemSelected}}`, checklist `{inputValue: {itemsChecked, itemsNotChecked}}`. Without a declared
 * type the form follows the value (a list is a checklist, an ISO date-time a date, anything else `inputValue`); an
 * object that already is an input object is kept as written.
 */
import { isDateTimeValue, isIsoDateTime, resolveDateTime } from "../rules/datetime.js";
import type { FieldTypeName } from "./schema.js";
import { isRecord } from "../model/guards.js";

/** `{inputValue: ...}` or `{date: ...}`: the documented input-object forms. */
export function isInputObject(v: unknown): v is Record<string, unknown> {
  if (!isRecord(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && (keys[0] === "inputValue" || keys[0] === "date");
}

/** undefined = the field holds no value (null in the fixture). */
export function toInputObject(value: unknown, type: FieldTypeName | undefined, now: Date): unknown {
  if (value === null || value === undefined) return undefined;
  if (isInputObject(value) || (isRecord(value) && type === undefined)) return value;
  switch (type) {
    case "date":
      return { date: typeof value === "string" && isDateTimeValue(value) ? resolveDateTime(value, now) : value };
    case "radio":
      return { inputValue: { radioItemSelected: value } };
    case "checklist":
      return { inputValue: { itemsChecked: Array.isArray(value) ? value : [value], itemsNotChecked: [] } };
    case "text":
    case "number":
      return { inputValue: value };
    case undefined:
      if (Array.isArray(value)) return { inputValue: { itemsChecked: value, itemsNotChecked: [] } };
      if (typeof value === "string" && isIsoDateTime(value) && /\d{2}:\d{2}/.test(value)) return { date: value };
      return { inputValue: value };
  }
}
