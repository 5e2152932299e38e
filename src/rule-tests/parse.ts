/**
 * Reads one rule-test file: YAML (with positions), then the JSON Schema (ajv's validator, compiled ahead of time)
 * for messages located at file:line:col (the same wording as rule files), then zod for typed data.
 */
import { readFile } from "node:fs/promises";
import { schemaMessages } from "../rules/messages.js";
import { parseRuleFile } from "../rules/parse.js";
import { posOfValue, type SourceFile } from "../rules/positions.js";
import type { Diagnostic } from "../rules/types.js";
import { TestFileSchema, type TestFileData } from "./schema.js";
// compiled ahead of time by `npm run schema` (./write-validator.ts): a run compiles no schema
import { testFileValidator } from "./validator-now.js";
import { errorMessage } from "../model/guards.js";

export interface ParsedTestFile {
  file: string;
  src?: SourceFile;
  /** present when the file is valid */
  data?: TestFileData;
  diagnostics: Diagnostic[];
}

function error(src: SourceFile, path: ReadonlyArray<string | number>, message: string, code = "schema"): Diagnostic {
  return { ...posOfValue(src, path), severity: "error", code, message };
}

export function parseTestText(file: string, text: string): ParsedTestFile {
  const parsed = parseRuleFile(file, text);
  const { src, data } = parsed;
  const diagnostics = [...parsed.diagnostics];
  if (diagnostics.some((d) => d.severity === "error")) return { file, src, diagnostics };
  if (data === null || data === undefined || typeof data !== "object" || Array.isArray(data)) {
    diagnostics.push(error(src, [], 'a rule-test file is a mapping with "version: 1", "now:" and "tests:"'));
    return { file, src, diagnostics };
  }
  const validate = testFileValidator();
  if (!validate(data)) {
    diagnostics.push(...schemaMessages([...(validate.errors ?? [])], { src, data }));
    return { file, src, diagnostics };
  }
  const typed = TestFileSchema.safeParse(data);
  if (!typed.success) {
    // the JSON Schema and zod come from one definition; this only guards against a gap between them
    for (const issue of typed.error.issues.slice(0, 10)) {
      diagnostics.push(
        error(
          src,
          issue.path.map((p) => (typeof p === "number" ? p : String(p))),
          issue.message,
        ),
      );
    }
    return { file, src, diagnostics };
  }
  return { file, src, data: typed.data, diagnostics };
}

export async function readTestFile(file: string): Promise<ParsedTestFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const message = `cannot read ${file}: ${errorMessage(err)}`;
    return { file, diagnostics: [{ file, line: 0, col: 0, severity: "error", code: "file", message }] };
  }
  return parseTestText(file, text);
}
