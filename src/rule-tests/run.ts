/**
 * `flowrules test`: discover test files and rules, load the rules once (loadRules, like every other verb), run every
 * case with the pure planner, and — with requireTests — fail each loaded rule no case names.
 */
import { catalogWorkflow, type Catalog } from "../rules/catalog.js";
import { checkRuleStructure, hasNames } from "../rules/structure-checks.js";
import { loadRules, ruleSelection, unmatchedMessage } from "../rules/index.js";
import type { Diagnostic, RuleSet } from "../rules/types.js";
import { discover } from "./discover.js";
import { readTestFile } from "./parse.js";
import { runCase } from "./run-case.js";
import { NO_TESTS_CODE, noTestsMessage, type CaseResult, type TestRun } from "./types.js";
import type { FieldTypeName } from "./schema.js";
import { fieldTypeOf } from "../model/values.js";
import { fieldKey } from "../model/field-values.js";

export interface RunOptions {
  requireTests?: boolean;
  /**
   * the workflow catalog: resolves the step and field names of the rules to the ids fixtures use, and gives the
   * form-field types that turn fixtures' plain values into input objects (a file's `field_types` still win)
   */
  catalog?: Catalog;
  /** --rule: run only the cases naming a rule these names or globs select (src/rules/rule-patterns.ts) */
  rules?: string[];
}

function fileProblem(path: string, message: string): Diagnostic {
  return { file: path, line: 0, col: 0, severity: "error", code: "file", message };
}

function untested(ruleSet: RuleSet, results: CaseResult[]): CaseResult[] {
  const tested = new Set(results.flatMap((r) => r.rules));
  return ruleSet.rules
    .filter((r) => !tested.has(r.name))
    .map((r) => ({
      pos: r.pos,
      rules: [r.name],
      name: "(no test)",
      status: "fail" as const,
      failures: [{ subject: "--require-tests", expected: "at least one test case naming this rule", actual: "none" }],
      durationMs: 0,
    }));
}

/** Each catalog workflow's form-field types by `step:action`, for fixtures' plain values (docs/writing-rules.md). */
function catalogFieldTypes(catalog: Catalog | undefined): Map<number, Record<string, FieldTypeName>> {
  const out = new Map<number, Record<string, FieldTypeName>>();
  for (const w of catalog?.workflows ?? []) {
    const types: Record<string, FieldTypeName> = {};
    for (const step of w.steps) {
      for (const action of step.actions) {
        const t = fieldTypeOf(action.type);
        if (t) types[fieldKey(step.id, action.id)] = t;
      }
    }
    out.set(w.workflow.id, types);
  }
  return out;
}

function resolvedByCatalog(rule: RuleSet["rules"][number], catalog: Catalog | undefined): RuleSet["rules"][number] {
  if (!catalog || !hasNames(rule)) return rule;
  const [only, ...more] = catalogWorkflow(catalog, rule.workflow);
  if (!only || more.length > 0) return rule;
  return checkRuleStructure(rule, only).rule ?? rule;
}

export async function runTests(paths: string[], opts: RunOptions = {}): Promise<TestRun & { ruleSet?: RuleSet }> {
  const found = await discover(paths);
  const diagnostics: Diagnostic[] = found.problems.map((p) => fileProblem(p.path, p.message));
  if (found.problems.length === 0 && found.testFiles.length === 0) {
    // a CI step that runs no test must not pass silently
    diagnostics.push({ ...fileProblem(paths.join(" "), noTestsMessage(paths)), code: NO_TESTS_CODE });
  }
  const loaded = await loadRules(found.rulePaths);
  diagnostics.push(...loaded.diagnostics);
  const run: TestRun & { ruleSet?: RuleSet } = { files: found.testFiles, results: [], diagnostics };
  if (!loaded.ruleSet) return run;
  // with the workflow catalog, steps and fields named in the rules become the ids the fixtures use
  if (opts.catalog)
    loaded.ruleSet = { ...loaded.ruleSet, rules: loaded.ruleSet.rules.map((r) => resolvedByCatalog(r, opts.catalog)) };
  run.ruleSet = loaded.ruleSet;
  const only = opts.rules && opts.rules.length > 0 ? ruleSelection(opts.rules) : undefined;
  if (only) {
    const missing = only.unmatched(loaded.ruleSet.rules.map((r) => r.name));
    if (missing.length > 0) {
      const where = found.rulePaths.join(", ") || paths.join(", ");
      diagnostics.push({ ...fileProblem("", unmatchedMessage(missing, where)), code: "unknown-rule" });
      return run;
    }
  }
  const catalogTypes = catalogFieldTypes(opts.catalog);
  for (const file of found.testFiles) {
    const parsed = await readTestFile(file);
    diagnostics.push(...parsed.diagnostics);
    if (!parsed.data || !parsed.src) continue;
    for (let index = 0; index < parsed.data.tests.length; index++) {
      const named = parsed.data.tests[index]?.rule;
      if (only && !(Array.isArray(named) ? named : [named ?? ""]).some((n) => only.selects(n))) continue;
      run.results.push(
        await runCase({ src: parsed.src, data: parsed.data, index, ruleSet: loaded.ruleSet, catalogTypes }),
      );
    }
  }
  if (opts.requireTests) {
    const scope = only
      ? { ...loaded.ruleSet, rules: loaded.ruleSet.rules.filter((r) => only.selects(r.name)) }
      : loaded.ruleSet;
    run.results.push(...untested(scope, run.results));
  }
  return run;
}

/** Any error diagnostic (rules or test files that did not load) fails the run, as does any failed case. */
export function runFailed(run: TestRun): boolean {
  return run.diagnostics.some((d) => d.severity === "error") || run.results.some((r) => r.status !== "pass");
}
