/**
 * Splits a JSONata expression at its top-level `or` / `and` operators, by scanning the source text (JSONata's AST
 * keeps no source ranges): brackets, strings, `backtick names` and comments are skipped, and `and` / `or` count only
 * as whole words outside them that are not a path step (`fields.or`). `and` binds tighter than `or`, so a top-level
 * `or` is split first. Each part is then compiled and evaluated on its own (see clauses.ts).
 */

export interface ClauseNode {
  source: string;
  op?: "and" | "or";
  parts?: ClauseNode[];
}

const WORD = /[A-Za-z0-9_$]/;
const OPEN = "([{";
const CLOSE = ")]}";

/** Index of the end of a string / name / comment starting at `i`, or `i` when none starts there. */
function skipLiteral(src: string, i: number): number {
  const c = src[i];
  if (c === '"' || c === "'" || c === "`") {
    let j = i + 1;
    while (j < src.length && src[j] !== c) j += src[j] === "\\" && c !== "`" ? 2 : 1;
    return j + 1;
  }
  if (c === "/" && src[i + 1] === "*") {
    const end = src.indexOf("*/", i + 2);
    return end < 0 ? src.length : end + 2;
  }
  return i;
}

/** Top-level positions of the word `op`, or undefined when the brackets do not balance. */
function topLevelOps(src: string, op: "and" | "or"): number[] | undefined {
  const found: number[] = [];
  let depth = 0;
  let i = 0;
  let prevSignificant = "";
  while (i < src.length) {
    const skipped = skipLiteral(src, i);
    if (skipped !== i) {
      i = skipped;
      prevSignificant = "x";
      continue;
    }
    const c = src[i] ?? "";
    if (OPEN.includes(c)) depth++;
    else if (CLOSE.includes(c)) {
      depth--;
      if (depth < 0) return undefined;
    } else if (
      depth === 0 &&
      src.startsWith(op, i) &&
      !WORD.test(src[i - 1] ?? "") &&
      !WORD.test(src[i + op.length] ?? "") &&
      prevSignificant !== "."
    ) {
      found.push(i);
      i += op.length;
      prevSignificant = "x";
      continue;
    }
    if (!/\s/.test(c)) prevSignificant = c;
    i++;
  }
  return depth === 0 ? found : undefined;
}

/** `( a and b )` → `a and b`, but not `(a) and (b)` nor a block `(x := 1; x > 0)`. */
function stripParens(src: string): string {
  let s = src.trim();
  while (s.startsWith("(") && s.endsWith(")")) {
    const inner = s.slice(1, -1);
    const ops = topLevelOps(inner, "and");
    if (ops === undefined || /;/.test(inner.replace(/"[^"]*"|'[^']*'/g, ""))) break;
    s = inner.trim();
  }
  return s;
}

export function splitClauses(source: string, depth = 0): ClauseNode {
  const s = stripParens(source);
  if (depth >= 4) return { source: s };
  for (const op of ["or", "and"] as const) {
    const at = topLevelOps(s, op);
    if (!at || at.length === 0) continue;
    const parts: string[] = [];
    let from = 0;
    for (const i of at) {
      parts.push(s.slice(from, i));
      from = i + op.length;
    }
    parts.push(s.slice(from));
    if (parts.some((p) => p.trim() === "")) return { source: s };
    return { source: s, op, parts: parts.map((p) => splitClauses(p, depth + 1)) };
  }
  return { source: s };
}
