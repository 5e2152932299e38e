/**
 * `--rule` patterns: an exact rule name, or a glob (`approve-*`, `step-?`, `[ab]-*`, `{a,b}-x`) matched by
 * picomatch against the whole name. Rule names are letters, digits, `-`, `_` and `.` (schemas/rules.schema.json), so
 * an exact name never holds a glob character; an exact match is still tried first so a name always selects itself.
 */
import picomatch from "picomatch";
import { closest } from "../model/suggest.js";

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
          const near = closest(m.pattern, names);
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
