/** Rule diagnostics as events: one `rule.diagnostic` each, with its place as fields a log collector can index. */
import type { Logger } from "../../log/index.js";
import type { Diagnostic } from "../../rules/types.js";

export function logDiagnostics(log: Logger, diagnostics: readonly Diagnostic[]): void {
  for (const { file, line, col, severity, code, message, rule } of diagnostics) {
    log.event(
      "rule.diagnostic",
      { file, line, col, severity, code, message, ...(rule ? { rule } : {}) },
      severity === "error" ? "error" : "warn",
    );
  }
}
