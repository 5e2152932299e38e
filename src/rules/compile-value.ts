/** Action input values: every `{{ expr }}` compiled; subtrees without templates stay literal. */
import type { CompiledExpr, CompiledValue } from "./types.js";
import { compileJsonata } from "./jsonata-compile.js";
import { checkExpr } from "./expr-checks.js";
import { exprStepRef } from "./structure-refs.js";
import { hasTemplate, splitTemplate } from "./templates.js";
import { scalarIndexToPos } from "./positions.js";
import { report, type RuleContext } from "./compile-context.js";
import { isRecord } from "../model/guards.js";


function compileString(s: string, rel: string[], ctx: RuleContext, where: string): CompiledValue | undefined {
  const at = scalarIndexToPos(ctx.src, [...ctx.path, ...rel]);
  const split = splitTemplate(s);
  if (!split.ok) {
    report(ctx, "error", "template", at(split.at), `${split.message} (${where} of ${ctx.label})`);
    return undefined;
  }
  const parts: Array<string | CompiledExpr> = [];
  let ok = true;
  for (const p of split.parts) {
    if (p.t === "text") {
      parts.push(p.text);
      continue;
    }
    const exprAt = (i: number) => at(p.start + i);
    const label = `template in ${where} of ${ctx.label}`;
    const c = compileJsonata(p.text, exprAt, label, ctx.name);
    if (!c.ok) {
      ctx.diagnostics.push(c.diagnostic);
      ok = false;
      continue;
    }
    const checked = checkExpr({ expr: c.expr, at: exprAt, where: label, rule: ctx.name, aliases: ctx.aliases });
    ctx.diagnostics.push(...checked.diagnostics);
    ctx.refs.push(checked.refs);
    for (const st of checked.steps) exprStepRef(ctx, st);
    parts.push(c.expr);
  }
  if (!ok) return undefined;
  const whole = parts.length === 1 && typeof parts[0] !== "string";
  return { t: "template", whole, parts };
}

function containsTemplate(v: unknown): boolean {
  if (typeof v === "string") return hasTemplate(v);
  if (Array.isArray(v)) return v.some(containsTemplate);
  if (isRecord(v)) return Object.values(v).some(containsTemplate);
  return false;
}

/** `rel` is the value's path inside the rule; `where` names it in messages. undefined after an error. */
export function compileValue(v: unknown, rel: string[], ctx: RuleContext, where: string): CompiledValue | undefined {
  if (!containsTemplate(v)) return { t: "literal", value: v };
  if (typeof v === "string") return compileString(v, rel, ctx, where);
  if (Array.isArray(v)) {
    const items = v.map((x, i) => compileValue(x, [...rel, String(i)], ctx, where));
    return items.every((x): x is CompiledValue => x !== undefined) ? { t: "array", items } : undefined;
  }
  if (isRecord(v)) {
    const entries: Array<[string, CompiledValue]> = [];
    let ok = true;
    for (const [k, x] of Object.entries(v)) {
      const c = compileValue(x, [...rel, k], ctx, where);
      if (c) entries.push([k, c]);
      else ok = false;
    }
    return ok ? { t: "object", entries } : undefined;
  }
  return { t: "literal", value: v };
}
