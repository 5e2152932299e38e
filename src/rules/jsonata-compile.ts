/** Compiles a JSONata expression once, turning a syntax error into a diagnostic at its place in the YAML file. */
import { jsonata } from "./jsonata-module.js";
import type { CompiledExpr, Diagnostic, SourcePos } from "./types.js";
import { compileFast } from "./jsonata-fast.js";
// a regex that backtracks without end cannot be cut off by the timeout: see regex-safety.ts (sets V8 flags on import)
import "./regex-safety.js";

/**
 * Guardrails for every compiled expression: a runaway expression (infinite recursion, a huge loop) is cut off with a
 * clear error for that instance instead of hanging the plan. Generous for real rules, which evaluate in microseconds.
 */
export const EVAL_LIMITS = { timeout: 1_000, stack: 500 } as const;

/** Depth of a syntax tree, walked without recursion (a deep tree is what we are guarding against). */
export function astDepth(ast: unknown): number {
  let max = 0;
  const seen = new Set<object>();
  const stack: Array<[unknown, number]> = [[ast, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() ?? [undefined, 0];
    if (typeof v !== "object" || v === null || seen.has(v) || v instanceof RegExp) continue;
    seen.add(v);
    const isNode = !Array.isArray(v) && typeof (v as { type?: unknown }).type === "string";
    const d = isNode ? depth + 1 : depth;
    if (d > max) max = d;
    for (const child of Object.values(v)) if (typeof child === "object" && child !== null) stack.push([child, d]);
  }
  return max - 1;
}

export type CompileOutcome = { ok: true; expr: CompiledExpr } | { ok: false; diagnostic: Diagnostic };

interface JsonataSyntaxError {
  code?: string;
  position?: number;
  token?: string;
  value?: unknown;
  message: string;
}

function asSyntaxError(err: unknown): JsonataSyntaxError {
  if (typeof err === "object" && err !== null) {
    const e = err as Record<string, unknown>;
    return {
      code: typeof e.code === "string" ? e.code : undefined,
      position: typeof e.position === "number" ? e.position : undefined,
      token: typeof e.token === "string" ? e.token : undefined,
      value: e.value,
      message: typeof e.message === "string" ? e.message : String(err),
    };
  }
  return { message: String(err) };
}

/** jsonata reports the end of the offending token; point at its start instead. */
export function errorIndex(e: JsonataSyntaxError, length: number): number {
  if (e.position === undefined) return 0;
  const start = e.token && e.token !== "(end)" ? e.position - e.token.length : e.position;
  return Math.max(0, Math.min(start, length));
}

/** JSONata's syntax errors in words, with the column in the expression (the file position is the diagnostic's). */
function syntaxWords(e: JsonataSyntaxError, text: string, at: number): string {
  const lead = text.length - text.trimStart().length;
  const before = text.slice(lead, Math.max(lead, at));
  const lines = before.split("\n");
  const column = (lines.at(-1) ?? "").length + 1;
  const col = lines.length > 1 ? `at line ${lines.length}, column ${column} of the expression` : `at column ${column} of the expression`;
  const token = e.token !== undefined && e.token !== "(end)" ? JSON.stringify(e.token) : undefined;
  const value = (e as { value?: unknown }).value;
  switch (e.code) {
    case "S0201":
      // a name or number right after another value: the operator between them is what is missing
      return /^[\w$]/.test(e.token ?? "")
        ? `unexpected ${token ?? "text"} ${col}: an operator (and, or, =, <, +) or a "." between names is probably missing before it`
        : `unexpected ${token ?? "text"} ${col}`;
    case "S0202":
      return `expected ${JSON.stringify(value)} ${col}, found ${token ?? "the end"}`;
    case "S0203":
      return `expected ${JSON.stringify(value)} before the end of the expression: a bracket or parenthesis is not closed`;
    case "S0204":
      return `unknown operator ${token ?? ""} ${col}`;
    case "S0207":
      return "the expression ends too early: something is missing after its last operator";
    case "S0101":
      return "a quoted text is not closed: end it with the quote it starts with";
    case "S0211":
      return `${token ?? "this symbol"} cannot start a value ${col}`;
    default:
      return e.message;
  }
}

/**
 * `text` is compiled as is (so jsonata's positions index into it); `at` maps an index in `text` to the file.
 * `where` names the expression in messages (`"when" in rule "x"`).
 */
export function compileJsonata(text: string, at: (i: number) => SourcePos, where: string, rule?: string): CompileOutcome {
  const lead = text.length - text.trimStart().length;
  try {
    const expr = jsonata(text, { ...EVAL_LIMITS });
    // an expression nested deeper than evaluation may go could never run; refuse it here, where it is located
    if (astDepth(expr.ast()) > EVAL_LIMITS.stack) throw new RangeError("nested too deeply");
    const fast = compileFast(expr.ast());
    return { ok: true, expr: { source: text.trim(), expr, ...(fast ? { fast } : {}), pos: at(lead) } };
  } catch (err) {
    const e = asSyntaxError(err);
    // jsonata's parser recurses per nesting level: a deeply nested expression overflows the stack
    if (err instanceof RangeError) e.message = `nested too deeply (more than ${EVAL_LIMITS.stack} levels; a few are plenty for a rule)`;
    const code = e.code ? ` (${e.code})` : "";
    const words = syntaxWords(e, text, errorIndex(e, text.length));
    return {
      ok: false,
      diagnostic: {
        ...at(errorIndex(e, text.length)),
        severity: "error",
        code: "jsonata",
        message: `invalid JSONata in ${where}: ${words}${code}`,
        ...(rule !== undefined ? { rule } : {}),
      },
    };
  }
}
