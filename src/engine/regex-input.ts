/**
 * JSONata's 1 s limit is checked between evaluation steps, so it cannot stop one long built-in call: a regular
 * expression run over a text of millions of characters ran for seconds per instance. Decided: an
 * expression that holds a regular expression is evaluated only when every text in the instance's context is at most
 * MAX_REGEX_INPUT characters; a longer one is an error for that instance (docs/writing-rules.md). V8's linear-time
 * engine (src/rules/regex-safety.ts) bounds each call by the input's length, so this bounds its time.
 */
import type { CompiledExpr } from "../model/rule-types.js";
import type { EvalContext } from "./context.js";

/** Far beyond any name, tag or form value; a linear-time scan of this much takes milliseconds. */
export const MAX_REGEX_INPUT = 100_000;

const holdsRegex = new WeakMap<CompiledExpr, boolean>();

function astHasRegex(node: unknown, depth = 0): boolean {
  if (depth > 1000 || typeof node !== "object" || node === null) return false;
  if (Array.isArray(node)) return node.some((n) => astHasRegex(n, depth + 1));
  const rec = node as Record<string, unknown>;
  if (rec.type === "regex") return true;
  return Object.values(rec).some((v) => astHasRegex(v, depth + 1));
}

/** Whether the expression holds a regular expression literal (worked out once per compiled expression). */
export function usesRegex(expr: CompiledExpr): boolean {
  let v = holdsRegex.get(expr);
  if (v === undefined) {
    v = astHasRegex(expr.expr.ast());
    holdsRegex.set(expr, v);
  }
  return v;
}

/** The length of the longest text in the context, stopping as soon as one passes `limit`. */
export function longestText(ctx: EvalContext, limit = MAX_REGEX_INPUT): number {
  let longest = 0;
  const stack: unknown[] = [ctx.instance, ctx.fields, ctx.snapshot, ctx.tags];
  let seen = 0;
  while (stack.length > 0 && longest <= limit && seen < 1_000_000) {
    const v = stack.pop();
    seen++;
    if (typeof v === "string") longest = Math.max(longest, v.length);
    else if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (typeof v === "object" && v !== null) for (const x of Object.values(v)) stack.push(x);
  }
  return longest;
}
