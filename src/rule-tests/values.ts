/** Comparing and showing expected vs actual values in rule tests. */
import { plainValue } from "../model/field-values.js";
import { isIsoDateTime } from "../rules/datetime.js";
import { isInputObject } from "./input-objects.js";
import { isRecord } from "../model/guards.js";

/** Deep equality where two ISO date-times are equal when they name the same instant (…:00Z = …:00.000Z). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === "string" && typeof b === "string") {
    return a === b || (isIsoDateTime(a) && isIsoDateTime(b) && Date.parse(a) === Date.parse(b));
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => sameValue(a[k], b[k]));
  }
  return a === b;
}

/** An expected input: written as an input object it is compared as is, else with the plain value sent. */
export function sameInput(expected: unknown, actualInputObject: unknown): boolean {
  if (isInputObject(expected)) return sameValue(expected, actualInputObject);
  return sameValue(expected, plainValue(actualInputObject) ?? null);
}

/** What to show of a sent input beside an expected one: the input object, or its plain value when that is expected. */
export function shownInput(expected: unknown, actualInputObject: unknown): unknown {
  return isInputObject(expected) ? actualInputObject : (plainValue(actualInputObject) ?? null);
}
