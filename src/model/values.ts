/**
 * Form-field values by meaning. A service may store and echo a value in its own format: a number as a decimal
 * string ("12.50", as Django REST framework's DecimalField does), a date with "+00:00" and microseconds, a radio
 * value as a plain string, a checklist in another order. Everything that compares or evaluates a field value goes
 * through here, so "the same value" means the same number, instant, option or set — never the same JSON text.
 *
 * Input objects follow the forms in README.md ("Form-field values"): text and number `{inputValue: v}`, date
 * `{date: iso}`, radio `{inputValue: {radioItemSelected}}`, checklist `{inputValue: {itemsChecked, itemsNotChecked}}`.
 * Pure functions, no I/O.
 */

/** The field types the service documents; any other string is treated as unknown. */
export type FieldType = "text" | "number" | "date" | "radio" | "checklist";
import { isRecord } from "./guards.js";

/** What a value means, ready to compare. */
export type Meaning =
  | { kind: "none" }
  | { kind: "number"; value: number }
  /** microseconds since the epoch (a service may keep microseconds; ms would merge distinct instants) */
  | { kind: "date"; micros: number }
  /** text and radio alike: a radio value is the text of the selected option */
  | { kind: "text"; value: string }
  /** checked items, sorted and de-duplicated (their order carries no meaning) */
  | { kind: "set"; items: string[] }
  /** any other shape, as canonical JSON (keys sorted) */
  | { kind: "other"; json: string };

/** The documented type of a field from a snapshot action (`type`) or a form-field record's `settings.type`. */
export function fieldTypeOf(...sources: unknown[]): FieldType | undefined {
  for (const s of sources) {
    const t = typeof s === "string" ? s : isRecord(s) ? s.type : undefined;
    if (typeof t !== "string") continue;
    const lower = t.toLowerCase();
    if (lower === "text" || lower === "number" || lower === "date" || lower === "radio" || lower === "checklist")
      return lower;
    if (lower === "textarea" || lower === "string") return "text";
    if (lower === "decimal" || lower === "integer" || lower === "float") return "number";
    if (lower === "datetime" || lower === "date-time") return "date";
  }
  return undefined;
}

// A JSON number, optionally with surrounding blanks; no hex, no "Infinity", no empty string.
const NUMERIC_RE = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/** A number from a number or a numeric string ("12.50", "1e3"); undefined otherwise. */
export function numberOf(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "string" && NUMERIC_RE.test(v)) {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * Microseconds since the epoch of an ISO 8601 date or date-time ("2024-05-01", "…T10:00:00Z",
 * "…T10:00:00.123456+00:00"); a time without offset is read as UTC. Undefined for anything else.
 */
export function instantOf(v: unknown): number | undefined {
  if (typeof v !== "string") return undefined;
  const m = ISO_RE.exec(v.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h ?? 0),
    minute = Number(mi ?? 0),
    second = Number(s ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 31 February over into March: such a date does not exist
  if (new Date(ms).getUTCDate() !== day) return undefined;
  const micros = Number(((frac ?? "") + "000000").slice(0, 6));
  let offsetMin = 0;
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0));
  }
  return (ms - offsetMin * 60_000) * 1000 + micros;
}

/** Canonical ISO text of an instant in microseconds: `toISOString()` form, with microseconds only when present. */
export function isoOfInstant(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const rest = micros - ms * 1000;
  const iso = new Date(ms).toISOString();
  return rest === 0 ? iso : `${iso.slice(0, -1)}${String(rest).padStart(3, "0")}Z`;
}

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
  if (isRecord(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

function itemText(v: unknown): string {
  return typeof v === "string" ? v : sortedJson(v);
}

function setOf(items: unknown[]): Meaning {
  return { kind: "set", items: [...new Set(items.map(itemText))].sort() };
}

/** A plain (unwrapped) value read as a field of `type`. */
function plainMeaning(v: unknown, type: FieldType | undefined): Meaning {
  if (v === null || v === undefined) return { kind: "none" };
  if (type === "number") {
    const n = numberOf(v);
    if (n !== undefined) return { kind: "number", value: n };
  }
  if (type === "date") {
    const t = instantOf(v);
    if (t !== undefined) return { kind: "date", micros: t };
  }
  if (typeof v === "number")
    return Number.isFinite(v) ? { kind: "number", value: v } : { kind: "other", json: sortedJson(v) };
  if (typeof v === "string") return { kind: "text", value: v };
  if (Array.isArray(v) && (type === "checklist" || v.every((x) => typeof x === "string"))) return setOf(v);
  if (isRecord(v)) {
    if ("radioItemSelected" in v) return plainMeaning(v.radioItemSelected, type === "radio" ? "text" : undefined);
    if ("itemsChecked" in v) return Array.isArray(v.itemsChecked) ? setOf(v.itemsChecked) : { kind: "none" };
  }
  return { kind: "other", json: sortedJson(v) };
}

/**
 * What an input object — or a plain value — means for a field of `type` (unknown: inferred from the shape, and a
 * string stays text). `{}`, null, absent and `{inputValue: null}` all mean "no value".
 */
export function normalizeValue(value: unknown, type?: FieldType): Meaning {
  if (value === null || value === undefined) return { kind: "none" };
  if (!isRecord(value)) return plainMeaning(value, type);
  const keys = Object.keys(value).filter((k) => value[k] !== undefined);
  if (keys.length === 0) return { kind: "none" };
  if ("date" in value && keys.length === 1) {
    const t = instantOf(value.date);
    if (value.date === null) return { kind: "none" };
    return t !== undefined ? { kind: "date", micros: t } : plainMeaning(value.date, type);
  }
  if ("inputValue" in value) return plainMeaning(value.inputValue, type);
  return plainMeaning(value, type);
}

/**
 * Do two values (input objects or plain values) mean the same for a field of `type`? Without a type, a numeric
 * string equals a number only when the other side is a number, and a text equals an instant only when it is an ISO
 * date-time naming that instant.
 */
export function sameValue(a: unknown, b: unknown, type?: FieldType): boolean {
  const x = normalizeValue(a, type);
  const y = normalizeValue(b, type);
  return sameMeaning(x, y, type);
}

function sameMeaning(x: Meaning, y: Meaning, type: FieldType | undefined): boolean {
  if (x.kind === "text" && y.kind !== "text") return sameMeaning(y, x, type);
  switch (x.kind) {
    case "none":
      return y.kind === "none";
    case "number":
      if (y.kind === "number") return x.value === y.value;
      return y.kind === "text" && numberOf(y.value) === x.value;
    case "date":
      if (y.kind === "date") return x.micros === y.micros;
      return y.kind === "text" && instantOf(y.value) === x.micros;
    case "text":
      if (y.kind !== "text") return false;
      if (x.value === y.value || type === "text") return x.value === y.value;
      // without a type, two date-times in different notations (…Z, …+00:00, microseconds) name one instant
      {
        const tx = isoDateTimeInstant(x.value);
        return tx !== undefined && tx === isoDateTimeInstant(y.value);
      }
    case "set":
      return y.kind === "set" && x.items.length === y.items.length && x.items.every((item, i) => item === y.items[i]);
    case "other":
      return y.kind === "other" && x.json === y.json;
  }
}

/** The instant of a full date-time (with a time part); plain dates and other text are left as text. */
function isoDateTimeInstant(s: string): number | undefined {
  return /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(s.trim()) ? instantOf(s) : undefined;
}

/**
 * The input object as the documented form for a field of `type`: a numeric string in a number field becomes a number,
 * a plain string in a radio field `{radioItemSelected}`. Anything else — and every value of an unknown type — is
 * returned as it came, so nothing is guessed.
 */
export function canonicalInput(inputObject: unknown, type: FieldType | undefined): unknown {
  if (type === undefined || !isRecord(inputObject) || !("inputValue" in inputObject)) return inputObject;
  const v = inputObject.inputValue;
  if (type === "number" && typeof v === "string") {
    const n = numberOf(v);
    return n === undefined ? inputObject : { ...inputObject, inputValue: n };
  }
  if (type === "radio" && typeof v === "string") return { ...inputObject, inputValue: { radioItemSelected: v } };
  return inputObject;
}
