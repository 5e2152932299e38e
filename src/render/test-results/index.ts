/** Test result formats on stdout by name (JUnit is a file, --junit): a new format is a new module, one line here and its name in ../format-names.ts. */
import type { TestRun } from "../../rule-tests/types.js";
import { testsJson } from "./json.js";
import { testsText } from "./text.js";
import type { TestResultsFormat } from "../format-names.js";

export type TestResultsFormatter = (run: TestRun, options: { color: boolean }) => string;

export const TEST_RESULT_FORMATS = {
  text: (run, { color }) => testsText(run, color),
  json: (run) => testsJson(run),
} as const satisfies Record<TestResultsFormat, TestResultsFormatter>;
export { TEST_RESULT_FORMAT_NAMES, type TestResultsFormat } from "../format-names.js";
