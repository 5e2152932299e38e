/**
 * The shape of `flowrules test --format json` (one JSON document on stdout). The TypeScript type is inferred from
 * here and `npm run schema` writes schemas/test-results.schema.json from it; the renderer imports the type alone.
 */
import { z } from "zod";

export const TEST_RESULTS_SCHEMA_ID = "https://flowrules.dev/schemas/test-results.schema.json";

const count = z.number().int().nonnegative();

const Place = z
  .object({ file: z.string(), line: count.describe("1-based; 0 when the problem is about the whole file"), col: count })
  .strict()
  .describe("where in a file");

export const TestFailure = z
  .object({
    instance: z.number().int().optional().describe("the fixture instance the difference is about"),
    instance_name: z.string().optional(),
    subject: z.string().describe("what differs, in words"),
    expected: z.string().optional(),
    actual: z.string().optional(),
    why: z.array(z.string()).optional().describe("the filters, clauses and field values that decided"),
    at: Place.optional().describe("where the test file says it, for problems in the test file itself"),
  })
  .strict()
  .describe("one difference between the expected and the actual plan");

export const TestCaseResult = z
  .object({
    name: z.string().describe("the case's name"),
    rules: z.array(z.string()).describe("the rules it tests"),
    status: z.enum(["pass", "fail", "error"]).describe("error: the case could not run (a problem in the test file)"),
    file: z.string(),
    line: count,
    col: count,
    duration_ms: z.number().nonnegative(),
    failures: z.array(TestFailure),
    notes: z.array(z.string()).optional().describe("what the case left unchecked (inputs it does not state)"),
  })
  .strict();

export const TestDiagnostic = z
  .object({
    file: z.string().describe("empty for a problem of the whole run (a --rule pattern matching no rule)"),
    line: count,
    col: count,
    severity: z.enum(["error", "warning"]),
    code: z.string(),
    message: z.string(),
    rule: z.string().optional(),
  })
  .strict()
  .describe("a rule or test file that did not load, or a warning about one");

export const TestResults = z
  .object({
    format_version: z.literal(1).describe("bumped only on an incompatible change of this document"),
    command: z.literal("test"),
    ok: z.boolean().describe("false exactly when the command exits 1"),
    passed: count,
    failed: count.describe("failed and errored cases, plus one per file that did not load"),
    files: z.array(z.string()).describe("the test files run, in order"),
    results: z.array(TestCaseResult).describe("one per case, in file order"),
    diagnostics: z.array(TestDiagnostic),
  })
  .strict()
  .describe("the result of flowrules test --format json");

export type TestResultsDocument = z.infer<typeof TestResults>;

export function testResultsJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(TestResults, { target: "draft-2020-12" });
  return { $schema, $id: TEST_RESULTS_SCHEMA_ID, title: "flowrules test --format json", ...rest };
}
