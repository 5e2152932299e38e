/** Test result formats on stdout by name (JUnit is a file, --junit): a new format is a new module and one line here. */
import type { TestRun } from "../../rule-tests/types.js";
import { testsJson } from "./json.js";
import { testsText } from "./text.js";

export type TestResultsFormatter = (run: TestRun, options: { color: boolean }) => string;

export const TEST_RESULT_FORMATS = {
  text: (run, { color }) => testsText(run, color),
  json: (run) => testsJson(run),
} as const satisfies Record<string, TestResultsFormatter>;
export type TestResultsFormat = keyof typeof TEST_RESULT_FORMATS;
export const TEST_RESULT_FORMAT_NAMES = Object.keys(TEST_RESULT_FORMATS) as TestResultsFormat[];
