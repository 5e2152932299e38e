/** Shared state while one rule is compiled: where it is, what it declares, and what was found so far. */
import type { Diagnostic, SourcePos } from "./types.js";
import type { ExprRefs } from "./ast-refs.js";
import type { StructureRef } from "./structure-ref.js";
import { posOfValue, type SourceFile } from "./positions.js";

export interface RuleContext {
  src: SourceFile;
  /** path of the rule in the file: ["rules", "3"] */
  path: string[];
  name?: string;
  /** "rule "x"" or "rules[3]" */
  label: string;
  /** declared aliases; undefined when `fields` is broken, so alias checks would only echo that error */
  aliases?: string[];
  diagnostics: Diagnostic[];
  refs: ExprRefs[];
  /** step and field references (ids or names), for the structure checks */
  structure: StructureRef[];
}

export function report(
  ctx: RuleContext,
  severity: Diagnostic["severity"],
  code: string,
  pos: SourcePos,
  message: string,
): void {
  ctx.diagnostics.push({ ...pos, severity, code, message, ...(ctx.name !== undefined ? { rule: ctx.name } : {}) });
}

export function posIn(ctx: RuleContext, ...rel: Array<string | number>): SourcePos {
  return posOfValue(ctx.src, [...ctx.path, ...rel.map(String)]);
}
