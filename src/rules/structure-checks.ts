/**
 * Does a compiled rule fit its workflow? Pure checks of every step and form-field reference of a rule (ids or names)
 * against the workflow's structure: the step is one of the workflow's, the field belongs to the step it is named
 * with, a value sent to a field fits the field's type, and a name resolves to exactly one step or field. The same
 * checks run offline (validate, against the workflow catalog) and live (plan, against the structure it reads).
 * docs/workflows.md describes them.
 */
import { distance } from "fastest-levenshtein";
import { actionKind } from "../actions/index.js";
import type { CompiledValue, SourcePos } from "../model/rule-types.js";
import { KNOWN_FIELD_TYPES, type StructureAction, type StructureStep, type WorkflowStructure } from "../model/structure.js";
import type { StructureRef } from "./structure-ref.js";
import type { CompiledAction, CompiledRule } from "./types.js";

export interface StructureIssue {
  severity: "error" | "warning";
  pos: SourcePos;
  /** the reference as messages name it: "fields.amount.action" */
  where: string;
  message: string;
}

export interface RuleStructureResult {
  issues: StructureIssue[];
  /** the rule with every name replaced by its id; absent when an error was found */
  rule?: CompiledRule;
}

const SHOWN = 8;

function q(s: string): string {
  return JSON.stringify(s);
}

function workflowLabel(s: WorkflowStructure): string {
  return `workflow ${s.workflow.id} ${q(s.workflow.name)}`;
}

function stepLabel(step: StructureStep): string {
  return `step ${step.id} ${q(step.name)}`;
}

function fieldLabel(f: StructureAction): string {
  return `field ${f.id} ${q(f.name)}`;
}

/** Candidates closest to what was written first (by name, and by id when an id was written). */
function closestFirst<T extends { id: number; name: string }>(written: number | string, items: readonly T[]): T[] {
  const w = String(written).toLowerCase();
  const d = (x: T): number => Math.min(distance(w, x.name.toLowerCase()), distance(w, String(x.id)));
  return [...items].sort((a, b) => d(a) - d(b));
}

function choices<T extends { id: number; name: string }>(written: number | string, items: readonly T[], what: string): string {
  if (items.length === 0) return `it has no ${what}s`;
  const sorted = closestFirst(written, items);
  const shown = sorted.slice(0, SHOWN).map((x) => `${x.id} ${q(x.name)}`);
  const more = sorted.length > SHOWN ? `, … (${sorted.length - SHOWN} more)` : "";
  return `valid ${what}s, closest first: ${shown.join(", ")}${more}`;
}

type Found<T> = { ok: T } | { error: string };

/** An id, an exact name, or a name that differs only in case and surrounding spaces; never a guess. */
function find<T extends { id: number; name: string }>(written: number | string, items: readonly T[]): T[] {
  if (typeof written === "number") return items.filter((x) => x.id === written);
  const exact = items.filter((x) => x.name === written);
  if (exact.length > 0) return exact;
  const norm = written.trim().toLowerCase();
  return items.filter((x) => x.name.trim().toLowerCase() === norm);
}

function findStep(ref: StructureRef, s: WorkflowStructure): Found<StructureStep> {
  const hits = find(ref.written, s.steps);
  const [only] = hits;
  if (hits.length === 1 && only) return { ok: only };
  if (hits.length > 1) {
    return { error: `step name ${q(String(ref.written))} is ambiguous in ${workflowLabel(s)}: steps ${hits.map((h) => h.id).join(", ")} carry it; use the id` };
  }
  const what = typeof ref.written === "number" ? `step ${ref.written} is not a step of` : `no step named ${q(ref.written)} in`;
  return { error: `${what} ${workflowLabel(s)}; ${choices(ref.written, s.steps, "step")}` };
}

function findField(ref: StructureRef, step: StructureStep, s: WorkflowStructure): Found<StructureAction> {
  const hits = find(ref.written, step.actions);
  const [only] = hits;
  if (hits.length === 1 && only) return { ok: only };
  if (hits.length > 1) {
    return { error: `field name ${q(String(ref.written))} is ambiguous in ${stepLabel(step)}: fields ${hits.map((h) => h.id).join(", ")} carry it; use the id` };
  }
  // a field of another step of the workflow: say which, since that is the usual mistake
  const elsewhere = s.steps.filter((st) => st.id !== step.id && find(ref.written, st.actions).length > 0);
  const what = typeof ref.written === "number" ? `field ${ref.written}` : `field ${q(ref.written)}`;
  const [other] = elsewhere;
  if (other) {
    return { error: `${what} belongs to ${stepLabel(other)}, not to ${stepLabel(step)} of ${workflowLabel(s)}; ${choices(ref.written, step.actions, "field")} of ${stepLabel(step)}` };
  }
  return { error: `${what} is not a field of ${stepLabel(step)} in ${workflowLabel(s)}; ${choices(ref.written, step.actions, "field")}` };
}

/** What is known of a value before it is evaluated: templates whose result type is unknown stand as UNKNOWN. */
const UNKNOWN = Symbol("unknown");
const SOME_TEXT = Symbol("text");
type Static = unknown;

function staticValue(v: CompiledValue): Static {
  switch (v.t) {
    case "literal":
      return v.value;
    case "template":
      return v.whole ? UNKNOWN : SOME_TEXT;
    case "array":
      return v.items.map(staticValue);
    case "object":
      return Object.fromEntries(v.entries.map(([k, x]) => [k, staticValue(x)]));
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function show(v: Static): string {
  if (v === UNKNOWN) return "a template";
  if (v === SOME_TEXT) return "text (a template)";
  return typeof v === "string" ? q(v) : JSON.stringify(v) ?? String(v);
}

function isText(v: Static): boolean {
  return typeof v === "string" || v === SOME_TEXT;
}

function optionsList(opts: readonly string[], written: string): string {
  const sorted = [...opts].sort((a, b) => distance(written.toLowerCase(), a.toLowerCase()) - distance(written.toLowerCase(), b.toLowerCase()));
  return sorted.map(q).join(", ");
}

/** Why a value does not fit its field's type, or undefined when it fits (or cannot be known before evaluation). */
export function valueProblem(field: StructureAction, raw: CompiledValue): string | undefined {
  const v = staticValue(raw);
  if (v === UNKNOWN) return undefined;
  const form = (expected: string): string => `${fieldLabel(field)} is a ${field.type} field: its value is ${expected}, not ${show(v)}`;
  if (!isRecord(v)) {
    switch (field.type) {
      case "date":
        return form("{ date: ISO date-time }");
      case "radio":
        return form("{ inputValue: { radioItemSelected: option } }");
      case "checklist":
        return form("{ inputValue: { itemsChecked: [...], itemsNotChecked: [...] } }");
      default:
        return form("{ inputValue: value }");
    }
  }
  switch (field.type) {
    case "number": {
      const x = v.inputValue;
      if (x === UNKNOWN || (typeof x === "number" && Number.isFinite(x))) return undefined;
      return `${fieldLabel(field)} is a number field: inputValue must be a number, not ${x === undefined ? "missing" : show(x)}`;
    }
    case "text": {
      const x = v.inputValue;
      if (x === UNKNOWN || isText(x)) return undefined;
      return `${fieldLabel(field)} is a text field: inputValue must be text, not ${x === undefined ? "missing" : show(x)}`;
    }
    case "date": {
      const x = v.date;
      if (x === UNKNOWN || x === SOME_TEXT) return undefined;
      if (typeof x === "string" && !Number.isNaN(Date.parse(x))) return undefined;
      return `${fieldLabel(field)} is a date field: its value is { date: ISO date-time }, not ${show(v)}`;
    }
    case "radio": {
      const inner = v.inputValue;
      if (inner === UNKNOWN) return undefined;
      const sel = isRecord(inner) ? inner.radioItemSelected : undefined;
      if (sel === UNKNOWN || sel === SOME_TEXT) return undefined;
      if (typeof sel !== "string") return form("{ inputValue: { radioItemSelected: option } }");
      if (field.options && !field.options.includes(sel)) {
        return `${q(sel)} is not an option of radio ${fieldLabel(field)}; options, closest first: ${optionsList(field.options, sel)}`;
      }
      return undefined;
    }
    case "checklist": {
      const inner = v.inputValue;
      if (inner === UNKNOWN) return undefined;
      if (!isRecord(inner)) return form("{ inputValue: { itemsChecked: [...], itemsNotChecked: [...] } }");
      for (const key of ["itemsChecked", "itemsNotChecked"]) {
        const items = inner[key];
        if (items === undefined || items === UNKNOWN) continue;
        if (!Array.isArray(items)) return `${fieldLabel(field)} is a checklist field: ${key} must be a list of items, not ${show(items)}`;
        for (const it of items) {
          if (it === UNKNOWN || it === SOME_TEXT) continue;
          if (typeof it !== "string") return `${fieldLabel(field)} is a checklist field: ${key} holds ${show(it)}, not an item`;
          if (field.options && !field.options.includes(it)) {
            return `${q(it)} is not an item of checklist ${fieldLabel(field)}; items, closest first: ${optionsList(field.options, it)}`;
          }
        }
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Checks a rule's references against its workflow's structure and resolves its names. Errors name the rule, the
 * reference and the valid choices; a field of a type flowrules does not know is accepted with one warning.
 */
export function checkRuleStructure(rule: CompiledRule, s: WorkflowStructure): RuleStructureResult {
  const issues: StructureIssue[] = [];
  const ids = new Map<number, number>();
  const steps = new Map<number, StructureStep>();
  const label = `rule ${q(rule.name)}`;
  const add = (severity: StructureIssue["severity"], ref: StructureRef, message: string, at?: { pos: SourcePos; where: string }): void => {
    const where = at?.where ?? ref.where;
    issues.push({ severity, pos: at?.pos ?? ref.pos, where, message: `${label}: ${where}: ${message}` });
  };
  const unknownTypes = new Set<number>();
  const refs = rule.structure ?? [];
  for (const ref of refs) {
    if (ref.kind !== "step") continue;
    const found = findStep(ref, s);
    if ("error" in found) add("error", ref, found.error);
    else {
      ids.set(ref.key, found.ok.id);
      steps.set(ref.key, found.ok);
    }
  }
  for (const ref of refs) {
    if (ref.kind !== "field" || ref.step === undefined) continue;
    const step = steps.get(ref.step);
    if (!step) continue; // its step is already reported
    const found = findField(ref, step, s);
    if ("error" in found) {
      add("error", ref, found.error);
      continue;
    }
    const field = found.ok;
    ids.set(ref.key, field.id);
    if (!ref.value) continue;
    if (!(KNOWN_FIELD_TYPES as readonly string[]).includes(field.type)) {
      if (!unknownTypes.has(field.id)) {
        unknownTypes.add(field.id);
        add("warning", ref, `${fieldLabel(field)} has type ${q(field.type)}, which flowrules does not know: any value is accepted`, ref.value);
      }
      continue;
    }
    const problem = valueProblem(field, ref.value.value);
    if (problem) add("error", ref, problem, ref.value);
  }
  if (issues.some((i) => i.severity === "error")) return { issues };
  return { issues, rule: withIds(rule, (key) => ids.get(key) ?? key) };
}

/** The rule with every step and field key replaced by its id. */
function withIds(rule: CompiledRule, id: (key: number) => number): CompiledRule {
  const fields = Object.fromEntries(Object.entries(rule.fields).map(([a, f]) => [a, { step: id(f.step), action: id(f.action) }]));
  const select = { ...rule.select };
  if (typeof select.active_step_id === "number") select.active_step_id = id(select.active_step_id);
  const actions = rule.actions.map((a) => {
    const m = actionKind(a.kind);
    // each kind rewrites its own references; the registry types modules by their own action
    return (m.mapRefs ? m.mapRefs(a, id) : a) as CompiledAction;
  });
  const structure = (rule.structure ?? []).map((r) => ({ ...r, key: id(r.key), ...(r.step !== undefined ? { step: id(r.step) } : {}) }));
  return { ...rule, fields, select, actions, structure };
}

/** Does the rule still hold names that only a workflow's structure can resolve? */
export function hasNames(rule: CompiledRule): boolean {
  return (rule.structure ?? []).some((r) => typeof r.written === "string" && r.key < 0);
}
