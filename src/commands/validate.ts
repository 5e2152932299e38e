/** `flowrules validate [paths...]`: schema, JSONata, aliases, names and conflicts, without any request. */
import { loadRules } from "../rules/index.js";
import { DIAGNOSTIC_FORMATS, type DiagnosticFormat } from "../render/validate/index.js";
import { logDiagnostics } from "../render/events/validate.js";
import type { Logger } from "../log/index.js";
import { EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import { CATALOG_FILE, readCatalog } from "../rules/catalog.js";
import { catalogDiagnostics } from "../rules/catalog-checks.js";

export interface ValidateOptions {
  format: DiagnosticFormat;
  /** the workflow catalog (default flowrules.workflows.json in the current directory, when present) */
  workflows?: string;
  /** the base URL the catalog must have been pulled from, when known (FLOWRULES_BASE_URL) */
  baseUrl?: string;
}

/** Runs the validation and returns the output and exit code (kept apart from process I/O for tests). */
export async function runValidate(
  paths: string[],
  opts: ValidateOptions,
  color = false,
  log?: Logger,
): Promise<{ output: string; exitCode: number; notes: string[] }> {
  const result = await loadRules(paths);
  const catalog = await readCatalog(opts.workflows ?? CATALOG_FILE, {
    required: opts.workflows !== undefined,
    ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
  });
  const notes = [...catalog.warnings];
  if (result.ruleSet) {
    if (catalog.catalog) for (const d of catalogDiagnostics(result.ruleSet.rules, catalog.catalog, opts.workflows ?? CATALOG_FILE)) result.diagnostics.push(d);
    else notes.push(`no workflow catalog (${opts.workflows ?? CATALOG_FILE}): steps, fields and input values were not checked against the workflows; \`flowrules pull\` writes it`);
  }
  if (log) logDiagnostics(log, result.diagnostics);
  if (result.ruleSet) log?.event("rules.loaded", { files: result.ruleSet.files.length, rules: result.ruleSet.rules.length });
  const errors = result.diagnostics.some((d) => d.severity === "error");
  const output = DIAGNOSTIC_FORMATS[opts.format](result.diagnostics, {
    color,
    ...(result.ruleSet ? { files: result.ruleSet.files.length, rules: result.ruleSet.rules.length } : {}),
  });
  return { output, exitCode: errors ? EXIT_ERROR : EXIT_OK, notes };
}

