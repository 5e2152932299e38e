/**
 * Turns ajv errors into one clear message per mistake, each at the YAML node it is about. ajv reports every failing
 * branch of an `anyOf`; we keep the branch that matches the value's type and drop the rest.
 */
import type { ErrorObject } from "ajv";
import type { Diagnostic } from "./types.js";
import { posOfKey, posOfValue, splitPointer, type SourceFile } from "./positions.js";
import { didYouMean } from "../text/suggest.js";
import { DATE_TIME_FORMAT, ENGINE_OWNED_PARAMS, RUNTIME_FORMAT } from "./schema-formats.js";
import { isRecord } from "../model/guards.js";
import { plural } from "../text/plural.js";

export interface MessageContext {
  src: SourceFile;
  /** the whole file's data, to name the rule an error belongs to */
  data: unknown;
}


export function typeName(v: unknown): string {
  if (v === null || v === undefined) return "empty";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  if (typeof v === "number") return Number.isInteger(v) ? "an integer" : "a number";
  if (typeof v === "boolean") return "true/false";
  return "a string";
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  null: "empty",
};

function typeWords(t: unknown): string {
  const list = Array.isArray(t) ? t : [t];
  return list.map((x) => TYPE_WORDS[String(x)] ?? String(x)).join(" or ");
}

/** A value quoted in a message, shortened: a 20 MB string in a rule file must not become a 20 MB message. */
export function clip(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** At most this many schema messages per validated value; the rest are counted in one closing message. */
export const MAX_SCHEMA_MESSAGES = 100;

/** The rule an error is in, from the path (`/rules/3/...`). */
export function ruleAt(data: unknown, segs: readonly string[]): { index: number; name?: string } | undefined {
  if (segs[0] !== "rules" || segs[1] === undefined) return undefined;
  const index = Number(segs[1]);
  const rules = isRecord(data) ? data.rules : undefined;
  const rule: unknown = Array.isArray(rules) ? rules[index] : undefined;
  const name = isRecord(rule) && typeof rule.name === "string" && rule.name !== "" ? clip(rule.name) : undefined;
  return { index, name };
}

/** `select.status`, `actions[1].complete_step.inputs[0].action` */
function keyPath(segs: readonly string[]): string {
  let out = "";
  for (const s of segs) out += /^\d+$/.test(s) ? `[${s}]` : out === "" ? s : `.${s}`;
  return out;
}

function ruleLabel(r: { index: number; name?: string }): string {
  return r.name !== undefined ? `rule "${r.name}"` : `rules[${r.index}]`;
}

/** How to name the value at a path in a message: `"select.status" in rule "x"`, `"version"`. */
export function what(data: unknown, segs: readonly string[]): string {
  const r = ruleAt(data, segs);
  if (r) {
    const inner = keyPath(segs.slice(2));
    return inner === "" ? ruleLabel(r) : `"${inner}" in ${ruleLabel(r)}`;
  }
  return segs.length === 0 ? "the file" : `"${keyPath(segs)}"`;
}

/** How to name a mapping that holds an unknown key: `rule "x"`, `select of rule "x"`, `the file`. */
function container(data: unknown, segs: readonly string[]): string {
  const r = ruleAt(data, segs);
  if (r) {
    const inner = keyPath(segs.slice(2));
    return inner === "" ? ruleLabel(r) : `${inner} of ${ruleLabel(r)}`;
  }
  return segs.length === 0 ? "" : `"${keyPath(segs)}"`;
}

/** `in rule "x"`, `in select of rule "x"`, `at the top of the file` */
function inContainer(data: unknown, segs: readonly string[]): string {
  const c = container(data, segs);
  return c === "" ? "at the top of the file" : `in ${c}`;
}

function show(v: unknown): string {
  return clip(typeof v === "string" ? `"${v}"` : JSON.stringify(v) ?? String(v));
}

/** Keeps, for each failed anyOf, only the errors of the branch that fits the value's type. */
export function collapseAnyOf(errors: ErrorObject[]): ErrorObject[] {
  let out = [...errors];
  // innermost first, so an outer anyOf sees its branches already resolved
  const anyOfs = out.filter((e) => e.keyword === "anyOf").sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const a of anyOfs) {
    const prefix = `${a.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const e of out) {
      if (!e.schemaPath.startsWith(prefix)) continue;
      const idx = e.schemaPath.slice(prefix.length).split("/")[0] ?? "";
      branches.set(idx, [...(branches.get(idx) ?? []), e]);
    }
    // a branch whose very type (or constant) differs from the value is not the one the author meant
    const fits = [...branches.entries()]
      .filter(([, errs]) => !errs.some((e) => e.instancePath === a.instancePath && (e.keyword === "type" || e.keyword === "const")))
      .sort(([x], [y]) => Number(x) - Number(y));
    const branchErrors = new Set([...branches.values()].flat());
    const chosen = fits[0];
    if (chosen) {
      out = out.filter((e) => e !== a && (!branchErrors.has(e) || chosen[1].includes(e)));
    } else {
      const types = [...branches.values()].flat().filter((e) => e.instancePath === a.instancePath && e.keyword === "type");
      const expected = [...new Set(types.map((e) => typeWords(e.params.type)))];
      const consts = [...branches.values()].flat().filter((e) => e.instancePath === a.instancePath && e.keyword === "const");
      for (const c of consts) expected.push(show(c.params.allowedValue));
      a.params = { ...a.params, expected };
      out = out.filter((e) => !branchErrors.has(e));
    }
  }
  return out;
}

function formatHint(format: string): string {
  if (format === DATE_TIME_FORMAT) {
    return 'not a date-time: write an ISO 8601 date-time (2024-05-01T00:00:00Z), "now", or a signed ISO 8601 duration (-P30D, -PT6H)';
  }
  if (format === RUNTIME_FORMAT) return "not a duration: write 00:50, 01 09:30, 02:30:00 or PT50M";
  return `not a valid ${format}`;
}

/** One diagnostic for one (already collapsed) ajv error; `base` is the path of the validated value in the file. */
export function toDiagnostic(e: ErrorObject, ctx: MessageContext, base: readonly string[] = []): Diagnostic {
  const { src, data } = ctx;
  const segs = [...base, ...splitPointer(e.instancePath)];
  const w = what(data, segs);
  const rule = ruleAt(data, segs)?.name;
  const p: Record<string, unknown> = e.params;
  let pos = posOfValue(src, segs);
  let message: string;
  let code = "schema";
  switch (e.keyword) {
    case "additionalProperties": {
      const key = String(p.additionalProperty);
      pos = posOfKey(src, segs, key);
      const shownKey = clip(key);
      const parent: unknown = e.parentSchema;
      const props = isRecord(parent) && isRecord(parent.properties) ? Object.keys(parent.properties) : [];
      if (segs.at(-1) === "select" && (ENGINE_OWNED_PARAMS as readonly string[]).includes(key)) {
        message =
          `"${shownKey}" is not allowed ${inContainer(data, segs)}: the engine owns paging and ordering ` +
          "(it asks for 500 a page and follows the cursor)";
        code = "engine-owned";
      } else {
        const hint = didYouMean(key, props);
        message = `unknown key "${shownKey}" ${inContainer(data, segs)}${hint || (props.length > 0 ? `; expected one of: ${props.join(", ")}` : "")}`;
        code = "unknown-key";
      }
      break;
    }
    case "required": {
      const key = String(p.missingProperty);
      message = `missing required key "${key}" ${inContainer(data, segs)}`;
      break;
    }
    case "type": {
      const parent: unknown = e.parentSchema;
      const needsNothing = isRecord(parent) && (!Array.isArray(parent.required) || parent.required.length === 0);
      const kind = segs.at(-1) ?? "";
      // `- abort: true`: a kind that needs no settings is written as a bare word
      if (segs.at(-3) === "actions" && needsNothing && (typeof e.data === "boolean" || e.data === null) && /^[a-z_]+$/.test(kind)) {
        message = `${w} takes no value: write "- ${kind}" (a bare word) or "- ${kind}: {}", not "- ${kind}: ${String(e.data)}"`;
        break;
      }
      message =
        e.data === null || e.data === undefined
          ? `${w} has no value; expected ${typeWords(p.type)}`
          : `${w} must be ${typeWords(p.type)}, not ${typeName(e.data)}`;
      break;
    }
    case "enum": {
      const allowed = Array.isArray(p.allowedValues) ? p.allowedValues.map(String) : [];
      message = `${w} is ${show(e.data)}, not one of: ${allowed.join(", ")}${typeof e.data === "string" ? didYouMean(e.data, allowed) : ""}`;
      break;
    }
    case "const": {
      message =
        segs.length === 1 && segs[0] === "version"
          ? `version must be 1 (the only version of the rule format), not ${show(e.data)}`
          : `${w} must be ${show(p.allowedValue)}, not ${show(e.data)}`;
      if (segs[0] === "version") code = "version";
      break;
    }
    case "format":
      message = `${w} is ${show(e.data)}, ${formatHint(String(p.format))}`;
      break;
    case "minimum":
      message = `${w} must be at least ${String(p.limit)}, not ${show(e.data)}`;
      if (segs.includes("limits")) code = "limit";
      break;
    case "maximum":
      message = `${w} must be at most ${String(p.limit)}, not ${show(e.data)}`;
      break;
    case "minItems":
    case "minLength":
      message = `${w} must not be empty`;
      break;
    case "uniqueItems":
      message = `${w} lists the same value twice`;
      break;
    case "pattern":
      message =
        segs.at(-1) === "name" && segs.length === 3
          ? `rule name ${show(e.data)} may use letters, digits, "-", "_" and "." only, starting with a letter or digit`
          : `${w} ${show(e.data)} must match ${String(p.pattern)}`;
      break;
    case "anyOf": {
      const expected = Array.isArray(p.expected) ? p.expected.map(String) : [];
      const parent: unknown = e.parentSchema;
      const desc = isRecord(parent) && typeof parent.description === "string" ? ` (${parent.description})` : "";
      // a workflow written as a bare name is the usual slip: say how to write it
      if (segs.length === 3 && segs.at(-1) === "workflow" && typeof e.data === "string") {
        message = `${w} must be an id, { name: ${JSON.stringify(e.data)} }, a list of them, or "*" (every workflow), not the string ${show(e.data)}`;
        break;
      }
      const words = expected.length > 2 ? `${expected.slice(0, -1).join(", ")} or ${expected.at(-1) ?? ""}` : expected.join(" or ");
      message = `${w} must be ${words || "something else"}, not ${typeName(e.data)}${desc}`;
      break;
    }
    default:
      message = `${w} ${e.message ?? "is invalid"}`;
  }
  return { ...pos, severity: "error", code, message, ...(rule !== undefined ? { rule } : {}) };
}

/** A missing required key that an unknown key next to it is a typo of ("nam" for "name"): one mistake, one message. */
function typoCovered(e: ErrorObject, all: readonly ErrorObject[]): boolean {
  if (e.keyword !== "required") return false;
  const parent: unknown = e.parentSchema;
  const props = isRecord(parent) && isRecord(parent.properties) ? Object.keys(parent.properties) : [];
  return all.some(
    (o) =>
      o.keyword === "additionalProperties" &&
      o.instancePath === e.instancePath &&
      didYouMean(String(o.params.additionalProperty), props) === `; did you mean "${String(e.params.missingProperty)}"?`,
  );
}

/** Diagnostics for a list of raw ajv errors, one per mistake. */
export function schemaMessages(errors: ErrorObject[], ctx: MessageContext, base: readonly string[] = []): Diagnostic[] {
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  const collapsed = collapseAnyOf(errors);
  const kept = collapsed.filter((x) => !typoCovered(x, collapsed));
  for (const [i, e] of kept.entries()) {
    if (out.length >= MAX_SCHEMA_MESSAGES) {
      // a hostile or generated file can hold 100,000 mistakes: name the first ones, count the rest
      const left = kept.length - i;
      out.push({ ...toDiagnostic(e, ctx, base), message: `${plural(left, "more schema error")} here and below not shown; fix the ones above first` });
      break;
    }
    const d = toDiagnostic(e, ctx, base);
    const key = `${d.line}:${d.col}:${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return out;
}
