/** One module per output format for diagnostics, all of this one type: a new format is a new file. */
import type { Diagnostic } from "../../rules/types.js";

export interface DiagnosticFormatOptions {
  /** ANSI colours (only on a TTY, never with NO_COLOR); decided by the caller */
  color: boolean;
  /** how many files and rules were checked, for the closing line */
  files?: number;
  rules?: number;
}

export type DiagnosticFormatter = (diagnostics: readonly Diagnostic[], opts: DiagnosticFormatOptions) => string;

export function counts(diagnostics: readonly Diagnostic[]): { errors: number; warnings: number } {
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  return { errors, warnings: diagnostics.length - errors };
}
