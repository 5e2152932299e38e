/**
 * `plan --compare <ref>`: which rules a change touches, and both versions of each, compiled. The versions at the ref
 * come from git (as `--changed-since` reads them, ./changed-since.ts) and are validated as the whole rule set they
 * were part of; a rule is "edited" when its definition digest differs (./rule-definitions.ts), so a file moved or
 * reformatted without edits touches nothing, and a renamed rule is a removed one and an added one.
 */
import { compileSources, type RuleSource } from "../rules/index.js";
import { looksLikeRuleFile } from "../rules/files.js";
import type { CompiledRule, RuleSet } from "../rules/types.js";
import { UserError } from "../model/errors.js";
import { diagnosticText } from "../rules/diagnostic-line.js";
import type { ImpactStatus } from "../plan/compare-schema.js";
import { ruleTextsSince, unreadableAtRef, type RuleText } from "./changed-since.js";
import { diffDefinitions, ruleDefinitions } from "./rule-definitions.js";

export const COMPARE_FLAG = "--compare";

/** What the engine plans for `plan --compare` (src/engine/plan-compare.ts): the touched rules, in both versions. */
export interface CompareSides {
  ref: string;
  commit: string;
  /** the touched rules in the order they are shown, each with what happened to it */
  touched: ReadonlyArray<{ rule: string; status: ImpactStatus }>;
  /** the versions at the ref of the edited and removed rules, under their own names */
  before: readonly CompiledRule[];
  /** rules defined the same at the ref and now (counted; planned only as the conflict context of touched rules) */
  unchanged: number;
  /** the working tree's untouched rules: those a touched rule may clash with are planned beside both versions */
  untouched?: readonly CompiledRule[];
  /** rule names in the order of their files, now and at the ref: each version is assembled in its own order */
  order?: { now: readonly string[]; atRef: readonly string[] };
}

export interface CompareInput {
  sides: CompareSides;
  /** the working tree's added and edited rules: the rule set the run plans besides the versions at the ref */
  ruleSet: RuleSet;
  /** one line each: rule files at the ref that could not be read, whose rules count as added */
  warnings: string[];
}

/** Compiles the rule files as they were at the ref, or says in one line why they cannot be compared. */
function compileAtRef(ref: string, files: RuleText[]): CompiledRule[] {
  const sources: RuleSource[] = files
    .filter((f) => !f.fromFolder || looksLikeRuleFile(f.text))
    .map(({ file, text }) => ({ file, text }));
  const loaded = compileSources(sources);
  if (loaded.ruleSet) return loaded.ruleSet.rules;
  const errors = loaded.diagnostics.filter((d) => d.severity === "error");
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : "";
  throw new UserError(
    `${COMPARE_FLAG}: the rules at ${ref} do not validate, so they cannot be compared: ${first ? diagnosticText(first) : "no rule set"}${more}`,
  );
}

/**
 * The touched rules between `ref` and the working tree under `paths`, with `now` the working tree's loaded rule set.
 * `only` (--rule) narrows the comparison to those names; a name defined on neither side is an error.
 */
export async function compareInput(
  ref: string,
  paths: string[],
  now: RuleSet,
  only: string[] = [],
  cwd = process.cwd(),
): Promise<CompareInput> {
  const texts = await ruleTextsSince(ref, paths, cwd, COMPARE_FLAG);
  const defs = (list: RuleText[]) => list.flatMap((f) => ruleDefinitions(f.file, f.text));
  const diff = diffDefinitions(defs(texts.before), defs(texts.now));
  const keep = (name: string): boolean => only.length === 0 || only.includes(name);
  if (only.length > 0) {
    const known = new Set([...diff.added, ...diff.changed, ...diff.unchanged, ...diff.removed.map((r) => r.name)]);
    const missing = only.filter((n) => !known.has(n));
    if (missing.length > 0)
      throw new UserError(`--rule names no rule at ${ref} or in the working tree: ${missing.join(", ")}`);
  }
  const status = new Map<string, ImpactStatus>();
  for (const n of diff.added) if (keep(n)) status.set(n, "added");
  for (const n of diff.changed) if (keep(n)) status.set(n, "edited");
  const removed = diff.removed.filter((r) => keep(r.name)).map((r) => r.name);
  for (const n of removed) status.set(n, "removed");

  const needOld = [...status].some(([, s]) => s !== "added");
  const old = needOld ? compileAtRef(ref, texts.before) : [];
  const before = old.filter((r) => status.get(r.name) === "edited" || status.get(r.name) === "removed");
  const after = now.rules.filter((r) => status.get(r.name) === "added" || status.get(r.name) === "edited");
  const touched = [
    ...after.map((r) => ({ rule: r.name, status: status.get(r.name) ?? "edited" })),
    ...before
      .filter((r) => status.get(r.name) === "removed")
      .map((r) => ({ rule: r.name, status: "removed" as const })),
  ];
  return {
    sides: {
      ref,
      commit: texts.commit,
      touched,
      before,
      unchanged: diff.unchanged.filter(keep).length,
      untouched: now.rules.filter((r) => !status.has(r.name)),
      order: { now: now.rules.map((r) => r.name), atRef: old.map((r) => r.name) },
    },
    ruleSet: { ...now, rules: after },
    warnings: unreadableAtRef(ref, texts.before, COMPARE_FLAG),
  };
}
