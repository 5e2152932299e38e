/**
 * Records the step and form-field references of a rule while it compiles (ids or names), so that they can be checked
 * against a workflow's structure and names resolved to ids (structure-checks.ts).
 */
import { nameKey, type StructureRef } from "./structure-ref.js";
import type { CompiledValue, SourcePos } from "./types.js";
import { posIn, type RuleContext } from "./compile-context.js";

/** An id as written (an integer, or a string of digits, as query parameters are), else undefined. */
function idOf(raw: unknown): number | undefined {
  if (typeof raw === "number" && Number.isInteger(raw) && raw > 0) return raw;
  if (typeof raw === "string" && /^[0-9]+$/.test(raw) && Number(raw) > 0) return Number(raw);
  return undefined;
}

function written(raw: unknown): number | string | undefined {
  const id = idOf(raw);
  if (id !== undefined) return id;
  return typeof raw === "string" && raw.trim() !== "" ? raw : undefined;
}

/** `rel` is the reference's path inside the rule; `where` names it in messages. */
export function stepRef(ctx: RuleContext, raw: unknown, rel: Array<string | number>, where: string): number | undefined {
  const w = written(raw);
  if (w === undefined) return undefined;
  const key = typeof w === "number" ? w : nameKey("step", w);
  ctx.structure.push({ kind: "step", key, written: w, pos: posIn(ctx, ...rel), where });
  return key;
}

export function fieldRef(
  ctx: RuleContext,
  raw: unknown,
  rel: Array<string | number>,
  where: string,
  step: number,
  value?: { value: CompiledValue; rel: Array<string | number>; where: string },
): number | undefined {
  const w = written(raw);
  if (w === undefined) return undefined;
  const key = typeof w === "number" ? w : nameKey("field", step, w);
  const ref: StructureRef = { kind: "field", key, written: w, pos: posIn(ctx, ...rel), where, step };
  if (value) ref.value = { value: value.value, pos: posIn(ctx, ...value.rel), where: value.where };
  ctx.structure.push(ref);
  return key;
}

/** A step named inside an expression (a waiting helper's argument): checked and resolved like any other step. */
export function exprStepRef(ctx: RuleContext, ref: { written: string | number; pos: SourcePos; where: string }): void {
  const w = written(ref.written);
  if (w === undefined) return;
  ctx.structure.push({ kind: "step", key: typeof w === "number" ? w : nameKey("step", w), written: w, pos: ref.pos, where: ref.where });
}
