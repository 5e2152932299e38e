/** One JSON document: `{ valid, errors, warnings, files, rules, diagnostics: [...] }`. */
import { counts, type DiagnosticFormatter } from "./types.js";
import { defined } from "../../model/defined.js";
import type { Diagnostic } from "../../rules/types.js";
import { jsonSafe } from "../escape.js";

/** One diagnostic as the JSON documents show it (`validate --format json`, `test --format json`). */
export function diagnosticJson(d: Diagnostic): {
  file: string;
  line: number;
  col: number;
  severity: Diagnostic["severity"];
  code: string;
  message: string;
  rule?: string;
} {
  return {
    file: d.file,
    line: d.line,
    col: d.col,
    severity: d.severity,
    code: d.code,
    message: d.message,
    ...(d.rule !== undefined ? { rule: d.rule } : {}),
  };
}

export const json: DiagnosticFormatter = (diagnostics, opts) => {
  const { errors, warnings } = counts(diagnostics);
  const doc = {
    valid: errors === 0,
    errors,
    warnings,
    ...defined({ files: opts.files, rules: opts.rules }),
    diagnostics: diagnostics.map(diagnosticJson),
  };
  return jsonSafe(`${JSON.stringify(doc, null, 2)}\n`);
};
