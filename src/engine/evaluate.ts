/**
 * Evaluation of compiled expressions and templated values against one instance's context. Errors become values
 * (never exceptions) so one bad instance is reported with rule and id and does not stop the others.
 */
import type { CompiledExpr, CompiledValue } from "../rules/types.js";
import type { Bindings, EvalContext } from "./context.js";
import { SLOW } from "../model/rule-types.js";
import { longestText, MAX_REGEX_INPUT, usesRegex } from "./regex-input.js";

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
    // a value doubling in a loop can outgrow what an array or string may hold before the time limit is checked again
    if (err instanceof RangeError && /Invalid (array|string) length/.test(err.message))
      return "evaluation built a value larger than an array or text may hold (runaway expression?)";
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
  if (usesRegex(expr)) {
    if (longestText(ctx) > MAX_REGEX_INPUT) {
      throw new EvaluationError(
        `a text of this instance is longer than the ${MAX_REGEX_INPUT.toLocaleString("en-US")} characters an expression with a regular expression may scan (the 1 s limit cannot stop one long regex call) in \`${expr.source}\` (${expr.pos.file}:${expr.pos.line}:${expr.pos.col})`,
        expr,
      );
    }
  }
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

/** The most characters one templated value may hold: far beyond any form field, far below exhausting memory. */
export const MAX_TEMPLATE_OUTPUT = 100_000;

/**
 * A number as a templated value carries it: JSONata's own string conversion ($string, `&`) writes a number with 15
 * significant digits, so 3 * 315.7 gives 947.1, not the binary 947.0999999999999 — which a decimal field would round
 * or refuse and every run would plan again. A whole template `{{ q * p }}` writes the same number as a number
 * (docs/writing-rules.md, "Numbers from templates"). Infinity and NaN (`{{ q / 0 }}`) are no value a field can hold: an error for
 * that instance, never a null written to the field.
 */
function templateNumber(n: number, expr: CompiledExpr): number {
  if (!Number.isFinite(n))
    throw templateError(`the template gives ${n}, which no field can hold (a division by zero?)`, expr);
  return Number.isInteger(n) ? n : Number(n.toPrecision(15));
}

function templateError(message: string, expr: CompiledExpr): EvaluationError {
  return new EvaluationError(
    `${message} in \`${expr.source}\` (${expr.pos.file}:${expr.pos.line}:${expr.pos.col})`,
    expr,
  );
}

/** JSONata sequences are arrays with extra flags; copy them into plain JSON values for plans. */
function toJson(v: unknown, expr: CompiledExpr): unknown {
  if (v === undefined || typeof v === "function") return undefined;
  if (typeof v === "number") return templateNumber(v, expr);
  if (Array.isArray(v)) return v.map((x) => toJson(x, expr));
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const j = toJson(x, expr);
      if (j !== undefined) out[k] = j;
    }
    return out;
  }
  return v;
}

function stringify(v: unknown, expr: CompiledExpr): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(templateNumber(v, expr));
  return JSON.stringify(toJson(v, expr));
}

function bounded<T>(v: T, expr: CompiledExpr): T {
  const size = typeof v === "string" ? v.length : typeof v === "object" && v !== null ? JSON.stringify(v).length : 0;
  if (size > MAX_TEMPLATE_OUTPUT)
    throw templateError(
      `the template gives ${size.toLocaleString("en-US")} characters, more than the ${MAX_TEMPLATE_OUTPUT.toLocaleString("en-US")} a value may hold`,
      expr,
    );
  return v;
}

/** Resolves a compiled input value for one instance: templates evaluated, literals as written. */
export async function evalValue(value: CompiledValue, ctx: EvalContext, bindings: Bindings): Promise<unknown> {
  switch (value.t) {
    case "literal":
      return value.value;
    case "template": {
      if (value.whole && value.parts.length === 1 && typeof value.parts[0] !== "string" && value.parts[0]) {
        const expr = value.parts[0];
        return bounded(toJson(await evalExpr(expr, ctx, bindings), expr), expr) ?? null;
      }
      let out = "";
      for (const part of value.parts) {
        if (typeof part === "string") out += part;
        else out += bounded(stringify(await evalExpr(part, ctx, bindings), part), part);
        if (out.length > MAX_TEMPLATE_OUTPUT && typeof part !== "string") bounded(out, part);
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
