/**
 * `--rule` patterns: an exact rule name, or a glob (`approve-*`, `step-?`, `[ab]-*`, `{a,b}-x`) matched by
 * picomatch against the whole name. Rule names are letters, digits, `-`, `_` and `.` (schemas/rules.schema.json), so
 * an exact name never holds a glob character; an exact match is still tried first so a name always selects itself.
 */
import picomatch from "picomatch";
import { closest } from "../text/suggest.js";

export interface RuleSelection {
  /** does this rule name match any pattern? */
  selects(name: string): boolean;
  /** the patterns that match none of `names`, each with the closest name when one is near */
  unmatched(names: readonly string[]): Array<{ pattern: string; closest?: string }>;
}

/** True when the pattern holds a glob character picomatch acts on. */
export function isGlob(pattern: string): boolean {
  return picomatch.scan(pattern).isGlob;
}

export function ruleSelection(patterns: readonly string[]): RuleSelection {
  // dot: a leading "." in a name is an ordinary character here, not a hidden file
  const matchers = patterns.map((p) => ({ pattern: p, test: isGlob(p) ? picomatch(p, { dot: true }) : (n: string) => n === p }));
  const one = (m: (typeof matchers)[number], name: string): boolean => name === m.pattern || m.test(name);
  return {
    selects: (name) => matchers.some((m) => one(m, name)),
    unmatched: (names) =>
      matchers
        .filter((m) => !names.some((n) => one(m, n)))
        .map((m) => {
          const near = isGlob(m.pattern) ? closestToGlob(m.pattern, names) : closest(m.pattern, names);
          return near !== undefined && near !== m.pattern ? { pattern: m.pattern, closest: near } : { pattern: m.pattern };
        }),
  };
}

/** `no rule matches "appr-*"; did you mean "approve-claims"?` — one clause per pattern. */
export function unmatchedMessage(items: ReadonlyArray<{ pattern: string; closest?: string }>, where: string): string {
  return items
    .map((u) => `no rule ${isGlob(u.pattern) ? "matches" : "named"} "${u.pattern}" in ${where}${u.closest !== undefined ? `; did you mean "${u.closest}"?` : ""}`)
    .join("; ");
}

/**
 * The name a glob that matches nothing was most likely meant for: the fewest edits of the pattern's own characters
 * that make it match (`aprove-*` is one edit from matching `approve-claims`), when that is few for its length, as
 * for a plain name (src/text/suggest.ts). `*` matches any run of characters and `?` or a `[class]` any one, free;
 * `{a,b}` alternatives are each tried.
 */
export function closestToGlob(pattern: string, names: readonly string[]): string | undefined {
  const alternatives = expandBraces(pattern);
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    for (const alt of alternatives) {
      const d = wildcardDistance(tokens(alt), name.toLowerCase());
      if (best === undefined || d < best.d) best = { name, d };
    }
  }
  if (best === undefined) return undefined;
  const literal = Math.max(...alternatives.map((a) => tokens(a).filter((t) => t.length === 1 && t !== "*" && t !== "?").length));
  return best.d <= Math.max(1, Math.floor(literal / 3)) ? best.name : undefined;
}

/** `{a,b}-x` → `a-x`, `b-x` (innermost first, at most 64 alternatives: the patterns are typed by people). */
function expandBraces(pattern: string): string[] {
  let out = [pattern];
  for (let round = 0; round < 8; round++) {
    const next = out.flatMap((p) => {
      const m = /\{([^{}]*)\}/.exec(p);
      return m ? m[1]!.split(",").map((alt) => p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)) : [p];
    });
    if (next.length === out.length && next.every((p, i) => p === out[i])) break;
    out = next.slice(0, 64);
  }
  return out;
}

/** A glob as tokens: "*", "?" (a `[class]` counts as one), or one literal character, lower-cased. */
function tokens(glob: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end > 0) {
        out.push("?");
        i = end;
        continue;
      }
    }
    if (c === "\\" && i + 1 < glob.length) {
      out.push(glob[++i]!.toLowerCase());
      continue;
    }
    out.push(c === "*" || c === "?" ? c : c.toLowerCase());
  }
  return out;
}

/** Edit distance between a tokenised glob and a name, wildcards matching for free. */
function wildcardDistance(glob: string[], name: string): number {
  // prev[j]: distance of glob[0..i) against name[0..j)
  let prev = Array.from({ length: name.length + 1 }, (_, j) => j);
  for (const t of glob) {
    const cur = new Array<number>(name.length + 1);
    cur[0] = t === "*" ? prev[0]! : prev[0]! + 1;
    for (let j = 1; j <= name.length; j++) {
      if (t === "*") cur[j] = Math.min(prev[j]!, cur[j - 1]!);
      else {
        const same = t === "?" || t === name[j - 1] ? 0 : 1;
        cur[j] = Math.min(prev[j - 1]! + same, prev[j]! + 1, cur[j - 1]! + 1);
      }
    }
    prev = cur;
  }
  return prev[name.length]!;
}
