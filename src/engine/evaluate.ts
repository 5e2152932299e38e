/**
 * Evaluation of compiled expressions and templated values against one instance's context. Errors become values
 * (never exceptions) so one bad instance is reported with rule and id and does not stop the others.
 */
import type { CompiledExpr, CompiledValue } from "../rules/types.js";
import type { Bindings, EvalContext } from "./context.js";
import { SLOW } from "../model/rule-types.js";

export class EvaluationError extends Error {
  constructor(
    message: string,
    readonly expr: CompiledExpr,
  ) {
    super(message);
    this.name = "EvaluationError";
  }
}

function describeJsonataError(err: unknown): string {
  if (typeof err === "object" && err !== null) {
    const e = err as { code?: unknown; message?: unknown; value?: unknown };
    if (e.code === "D1012") return `evaluation took longer than ${String(e.value)} ms (runaway expression?)`;
    if (e.code === "D1011") return `evaluation went deeper than ${String(e.value)} levels (runaway recursion?)`;
    if (typeof e.message === "string") return typeof e.code === "string" ? `${e.message} (${e.code})` : e.message;
  }
  return String(err);
}

/** JSONata's type errors of operators and functions (T1xxx, T2xxx): "595.54" < 150 and the like. */
const TYPE_ERROR_RE = /^T[12]\d{3}$/;

/**
 * For a type error, which field of the expression holds a value of an unexpected type, and how to convert it: a
 * field of unknown type keeps the service's text ("595.54"), which JSONata will not compare with a number.
 */
function typeHint(err: unknown, source: string, fields: Record<string, unknown>): string {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code !== "string" || !TYPE_ERROR_RE.test(code)) return "";
  for (const m of source.matchAll(/\bfields\.([A-Za-z_$][\w$]*)/g)) {
    const alias = m[1] as string;
    const v = fields[alias];
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) {
      return `; fields.${alias} is text here (${JSON.stringify(v.slice(0, 30))}): compare it as a number with $number(fields.${alias})`;
    }
    if (v !== undefined && typeof v !== "number") {
      return `; fields.${alias} is ${Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`} here`;
    }
  }
  return "";
}

export async function evalExpr(expr: CompiledExpr, ctx: EvalContext, bindings: Bindings): Promise<unknown> {
  if (expr.fast) {
    const v = expr.fast(ctx, bindings);
    if (v !== SLOW) return v;
  }
  try {
    return await expr.expr.evaluate(ctx, bindings);
  } catch (err) {
    throw new EvaluationError(
      `${describeJsonataError(err)}${typeHint(err, expr.source, ctx.fields)} in \`${expr.source}\` (${expr.pos.file}:${expr.pos.line}:${expr.pos.col})`,
      expr,
    );
  }
}

/** JSONata sequences are arrays with extra flags; copy them into plain JSON values for plans. */
function toJson(v: unknown): unknown {
  if (v === undefined || typeof v === "function") return undefined;
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const j = toJson(x);
      if (j !== undefined) out[k] = j;
    }
    return out;
  }
  return v;
}

function stringify(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  return JSON.stringify(toJson(v));
}

/** Resolves a compiled input value for one instance: templates evaluated, literals as written. */
export async function evalValue(value: CompiledValue, ctx: EvalContext, bindings: Bindings): Promise<unknown> {
  switch (value.t) {
    case "literal":
      return value.value;
    case "template": {
      if (value.whole && value.parts.length === 1 && typeof value.parts[0] !== "string" && value.parts[0]) {
        return toJson(await evalExpr(value.parts[0], ctx, bindings)) ?? null;
      }
      let out = "";
      for (const part of value.parts) {
        out += typeof part === "string" ? part : stringify(await evalExpr(part, ctx, bindings));
      }
      return out;
    }
    case "array":
      return Promise.all(value.items.map((i) => evalValue(i, ctx, bindings)));
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of value.entries) out[k] = await evalValue(v, ctx, bindings);
      return out;
    }
  }
}

/** `when` holds when JSONata yields true (a non-boolean result counts as truthy by JSONata's $boolean rules). */
export function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.some(truthy);
  if (typeof v === "object") return Object.keys(v).length > 0;
  if (typeof v === "function") return false;
  return true;
}
