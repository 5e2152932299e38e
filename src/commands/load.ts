/** Loads rules for a command; on any error prints the located diagnostics to stderr and yields nothing. */
import { loadRules, ruleSelection, unmatchedMessage } from "../rules/index.js";
import type { RuleSet } from "../rules/types.js";
import { UserError } from "../model/errors.js";
import type { CommandIO } from "../log/command-io.js";
import { logDiagnostics } from "../render/events/validate.js";
import { diagnosticLine } from "../render/validate/text.js";

export async function loadRuleSetOrReport(
  paths: string[],
  only: string[],
  io: CommandIO,
): Promise<RuleSet | undefined> {
  const result = await loadRules(paths, only.length > 0 ? { only } : undefined);
  if (io.log?.structured) logDiagnostics(io.log, result.diagnostics);
  else for (const d of result.diagnostics) io.stderr(`${diagnosticLine(d)}\n`);
  if (!result.ruleSet) return undefined;
  if (only.length > 0) {
    const missing = ruleSelection(only).unmatched(result.ruleSet.rules.map((r) => r.name));
    if (missing.length > 0) throw new UserError(`--rule: ${unmatchedMessage(missing, paths.join(", "))}`);
  }
  return result.ruleSet;
}
