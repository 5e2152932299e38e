/**
 * `when` and each of its top-level clauses evaluated in the rule's own context: the whole expression with the
 * compiled rule (so its value is exactly what the planner saw), each part compiled from its source text with the
 * same limits. A part that does not compile on its own (an unusual split) is shown without a value rather than
 * guessed.
 */
import { jsonata } from "../../rules/jsonata-module.js";
import { EVAL_LIMITS } from "../../rules/jsonata-compile.js";
import type { CompiledExpr } from "../../rules/types.js";
import type { Bindings, EvalContext } from "../context.js";
import { evalExpr, truthy } from "../evaluate.js";
import { splitClauses, type ClauseNode } from "./split.js";
import type { ClauseExplanation } from "./types.js";

function message(err: unknown): string {
  if (typeof err === "object" && err !== null && "message" in err && typeof err.message === "string")
    return err.message;
  return String(err);
}

/** JSONata sequences carry extra flags; a plain copy prints and serialises cleanly. */
function plain(v: unknown): unknown {
  if (v === undefined || typeof v === "function") return undefined;
  return JSON.parse(JSON.stringify(v)) as unknown;
}

async function evalPart(node: ClauseNode, ctx: EvalContext, bindings: Bindings): Promise<ClauseExplanation> {
  const out: ClauseExplanation = { source: node.source, holds: false };
  try {
    const v = plain(await jsonata(node.source, { ...EVAL_LIMITS }).evaluate(ctx, bindings));
    if (v !== undefined) out.value = v;
    out.holds = truthy(v);
  } catch (err) {
    out.error = message(err);
  }
  return withParts(out, node, ctx, bindings);
}

async function withParts(
  out: ClauseExplanation,
  node: ClauseNode,
  ctx: EvalContext,
  bindings: Bindings,
): Promise<ClauseExplanation> {
  if (node.op && node.parts) {
    out.op = node.op;
    out.parts = [];
    for (const p of node.parts) out.parts.push(await evalPart(p, ctx, bindings));
  }
  return out;
}

export async function explainWhen(
  when: CompiledExpr,
  ctx: EvalContext,
  bindings: Bindings,
): Promise<ClauseExplanation> {
  const out: ClauseExplanation = { source: when.source, holds: false };
  try {
    const v = plain(await evalExpr(when, ctx, bindings));
    if (v !== undefined) out.value = v;
    out.holds = truthy(v);
  } catch (err) {
    out.error = message(err);
  }
  return withParts(out, splitClauses(when.source), ctx, bindings);
}

/** The innermost clauses that decided the result: the failing parts of an `and`, all parts of a failed `or`. */
export function decidingClauses(c: ClauseExplanation): ClauseExplanation[] {
  if (!c.parts || !c.op) return [c];
  if (c.op === "and") {
    const failing = c.parts.filter((p) => !p.holds);
    return (failing.length > 0 ? failing : c.parts).flatMap(decidingClauses);
  }
  const holding = c.parts.filter((p) => p.holds);
  return (holding.length > 0 ? holding : c.parts).flatMap(decidingClauses);
}
