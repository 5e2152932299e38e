/** `test --format json`: every case's result and every load problem as one JSON document (schemas/test-results.schema.json). */
import { counts, type TestRun } from "../../rule-tests/types.js";
import { defined } from "../../model/defined.js";
import type { TestResultsDocument } from "./json-schema.js";
import { saidText } from "./said.js";
import { diagnosticJson } from "../validate/json.js";

export function testsJson(run: TestRun): string {
  const { passed, failed } = counts(run);
  const doc: TestResultsDocument = {
    format_version: 1,
    command: "test",
    // as runFailed in src/rule-tests/run.ts decides the exit code
    ok: !run.diagnostics.some((d) => d.severity === "error") && run.results.every((r) => r.status === "pass"),
    passed,
    failed,
    files: run.files,
    results: run.results.map((r) => ({
      name: r.name,
      rules: r.rules,
      status: r.status,
      file: r.pos.file,
      line: r.pos.line,
      col: r.pos.col,
      duration_ms: Math.max(0, Math.round(r.durationMs * 1000) / 1000),
      failures: r.failures.map((f) => ({
        ...defined({ instance: f.instance, instance_name: f.instance_name }),
        subject: f.subject,
        ...(f.expected !== undefined ? { expected: saidText(f.expected) } : {}),
        ...(f.actual !== undefined ? { actual: saidText(f.actual) } : {}),
        ...(f.why !== undefined ? { why: f.why.map(saidText) } : {}),
        ...(f.at !== undefined ? { at: { file: f.at.file, line: f.at.line, col: f.at.col } } : {}),
      })),
      ...(r.notes && r.notes.length > 0 ? { notes: r.notes } : {}),
    })),
    diagnostics: run.diagnostics.map(diagnosticJson),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
