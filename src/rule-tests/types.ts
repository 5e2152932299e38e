/** Results of rule tests: what the text and JUnit formats render and what decides the exit code. */
import type { Diagnostic, SourcePos } from "../rules/types.js";

/**
 * A value inside a failure's words, left as a value: the views (src/render/test-results) write it out — JSON for
 * data (`value`), a select filter's value as written (`written`), instance ids sorted (`ids`).
 */
export type SaidValue = { value: unknown } | { written: unknown } | { ids: readonly number[] };

/** Words of a failure: plain text, or text and values in order. */
export type Said = string | ReadonlyArray<string | SaidValue>;

/** One difference between the expected and the actual plan, about one instance and one field where it can. */
export interface Failure {
  /** the instance the difference is about */
  instance?: number;
  instance_name?: string;
  /** what differs: "matched", "complete_step step 20111 input 50230 (fields.comment)", "report \"X\" group \"urgent\"" */
  subject: string;
  expected?: Said;
  actual?: Said;
  /** why, in words: the failing select filters, the clauses of `when` that decided, the field values */
  why?: Said[];
  /** where the test file says it (for problems in the test file itself) */
  at?: SourcePos;
}

export type CaseStatus = "pass" | "fail" | "error";

export interface CaseResult {
  /** where the case is written */
  pos: SourcePos;
  rules: string[];
  name: string;
  status: CaseStatus;
  failures: Failure[];
  /** what the case leaves unchecked, said so a passing case does not claim more than it checks */
  notes?: string[];
  durationMs: number;
}

export interface TestRun {
  /** test files found, in order */
  files: string[];
  results: CaseResult[];
  /** problems that stopped whole files (YAML, schema) or the rules from loading */
  diagnostics: Diagnostic[];
}

/** The code of the diagnostic that says no test file was found (the run fails: docs/writing-rules.md). */
export const NO_TESTS_CODE = "no-tests";

/** The words for a run that found no test file, e.g. `no rule tests found in rules/ (files named *.test.yaml or *.test.yml)`. */
export function noTestsMessage(paths: readonly string[]): string {
  return `no rule tests found in ${paths.join(", ")} (files named *.test.yaml or *.test.yml)`;
}

/** The run found no test file at all: said as such, not as a file that did not load. */
export function foundNoTests(run: TestRun): boolean {
  return run.diagnostics.some((d) => d.code === NO_TESTS_CODE);
}

/** Files (rules or tests) that did not load: each counts as one failure, its diagnostics say why. */
export function brokenFiles(run: TestRun): string[] {
  return [
    ...new Set(run.diagnostics.filter((d) => d.severity === "error" && d.code !== NO_TESTS_CODE).map((d) => d.file)),
  ];
}

export function counts(run: TestRun): { passed: number; failed: number } {
  const passed = run.results.filter((r) => r.status === "pass").length;
  return { passed, failed: run.results.length - passed + brokenFiles(run).length };
}
