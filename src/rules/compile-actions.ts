/**
 * Compiles the entries of `actions:` (already schema-checked): finds the kind an entry names and lets the kind's
 * module compile its body, through a context bound to the entry's place in the file.
 */
import { ACTIONS, actionKind, type ActionCompileContext, type CompiledAction } from "../actions/index.js";
import { compileValue } from "./compile-value.js";
import { posIn, report, type RuleContext } from "./compile-context.js";
import { isRecord } from "../model/guards.js";
import { fieldRef, stepRef } from "./structure-refs.js";


/** The kind an entry names and its body: `- abort` (a bare kind) or `- <kind>: { ... }`. */
function entryOf(item: unknown): { kind: string; body: Record<string, unknown> } | undefined {
  if (typeof item === "string") return ACTIONS.some((m) => m.bare && m.kind === item) ? { kind: item, body: {} } : undefined;
  if (!isRecord(item)) return undefined;
  for (const m of ACTIONS) {
    const body = item[m.kind];
    if (body === undefined) continue;
    if (isRecord(body)) return { kind: m.kind, body };
    return m.bare ? { kind: m.kind, body: {} } : undefined;
  }
  return undefined;
}

/** ["inputs", 0, "action"] → ".inputs[0].action" */
function pathText(rel: Array<string | number>): string {
  return rel.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
}

/** One entry of `actions:`; undefined when it could not be compiled (the reason is already reported). */
export function compileAction(item: unknown, j: number, ctx: RuleContext): CompiledAction | undefined {
  const entry = entryOf(item);
  if (entry === undefined) return undefined;
  const { kind, body } = entry;
  const base = typeof item === "string" ? ["actions", j] : ["actions", j, kind];
  const actionCtx: ActionCompileContext = {
    label: ctx.label,
    ...(ctx.aliases !== undefined ? { aliases: ctx.aliases } : {}),
    pos: posIn(ctx, "actions", j),
    error: (code, rel, message) => report(ctx, "error", code, posIn(ctx, ...base, ...rel), message),
    value: (raw, rel, where) =>
      compileValue(raw, [...base, ...rel].map(String), ctx, `actions[${j}].${kind}.${where}`),
    stepRef: (raw, rel) => stepRef(ctx, raw, [...base, ...rel], `actions[${j}].${kind}${pathText(rel)}`),
    fieldRef: (raw, rel, step, value) =>
      fieldRef(ctx, raw, [...base, ...rel], `actions[${j}].${kind}${pathText(rel)}`, step, value && { value: value.value, rel: [...base, ...value.rel], where: `actions[${j}].${kind}${pathText(value.rel)}` }),
  };
  // the registry's modules are typed by their own action; the union of their results is CompiledAction
  return actionKind(kind).compile(body, actionCtx) as CompiledAction | undefined;
}
