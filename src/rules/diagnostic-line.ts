/**
 * One diagnostic as one line, `file:line:col  error  message  (rule)`: how every verb that loads rules reports them
 * (src/render/validate/text.ts adds colours and terminal escaping) and how `plan --compare` names the first problem
 * of the rules at its ref (src/ci/compare.ts).
 */
import type { Diagnostic } from "./types.js";

/** The colours a line may carry; the plain line uses none. */
export interface LineStyle {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
}

const plain = (s: string): string => s;
const PLAIN: LineStyle = { bold: plain, dim: plain, red: plain, yellow: plain };

/** `file:line:col`, or just the file when the problem has no place inside it (a missing file). */
export function diagnosticLocation(d: Diagnostic): string {
  if (d.file === "") return "flowrules";
  return d.line > 0 ? `${d.file}:${d.line}:${d.col}` : d.file;
}

/** The line, unescaped: whoever prints it escapes it for its medium. */
export function diagnosticText(d: Diagnostic, c: LineStyle = PLAIN): string {
  const sev = d.severity === "error" ? c.red("error") : c.yellow("warning");
  const rule = d.rule !== undefined ? `  ${c.dim(`(${d.rule})`)}` : "";
  return `${c.bold(diagnosticLocation(d))}  ${sev}  ${d.message}${rule}`;
}
