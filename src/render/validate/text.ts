/** `file:line:col  error  message  (rule)` lines, then one closing count line. */
import pc from "picocolors";
import type { Diagnostic } from "../../rules/types.js";
import { plural } from "../../text/plural.js";
import { counts, type DiagnosticFormatter } from "./types.js";
import { diagnosticText } from "../../rules/diagnostic-line.js";
import { terminalSafe } from "../escape.js";

/** One diagnostic as one line; also how every verb that loads rules reports them on stderr. */
export function diagnosticLine(d: Diagnostic, color = false): string {
  return terminalSafe(diagnosticText(d, pc.createColors(color)), color);
}

export const text: DiagnosticFormatter = (diagnostics, opts) => {
  const c = pc.createColors(opts.color);
  const lines = diagnostics.map((d) => diagnosticLine(d, opts.color));
  const { errors, warnings } = counts(diagnostics);
  const checked =
    opts.files !== undefined
      ? ` in ${plural(opts.files, "file")}${opts.rules !== undefined ? `, ${plural(opts.rules, "rule")}` : ""}`
      : "";
  const summary =
    errors > 0
      ? c.red(`✖ ${plural(errors, "error")}, ${plural(warnings, "warning")}${checked}`)
      : c.green(`✔ valid${checked}${warnings > 0 ? ` (${plural(warnings, "warning")})` : ""}`);
  return [...lines, ...(lines.length > 0 ? [""] : []), summary, ""].join("\n");
};
