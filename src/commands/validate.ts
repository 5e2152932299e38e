/** `flowrules validate [paths...]`: schema, JSONata, aliases, names and conflicts, without any request. */
import { lstat } from "node:fs/promises";
import { loadRules } from "../rules/index.js";
import { DIAGNOSTIC_FORMATS, type DiagnosticFormat } from "../render/validate/index.js";
import { logDiagnostics } from "../render/events/validate.js";
import type { Logger } from "../log/index.js";
import { EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import { CATALOG_FILE } from "../model/defaults.js";
import type { CatalogRead } from "../rules/catalog.js";

export interface ValidateOptions {
  format: DiagnosticFormat;
  /** the workflow catalog (default flowrules.workflows.json in the current directory, when present) */
  workflows?: string;
  /** the base URL the catalog must have been pulled from, when known (the base URL's variable or the profile) */
  baseUrl?: string;
}

/**
 * The catalog as readCatalog reads it; its reader (zod and the workflow structure's schema) is loaded only when there
 * is a file to read or one was named: validate without a catalog starts without them (docs/performance.md, "Start-up").
 */
async function readCatalogIfAny(opts: ValidateOptions): Promise<CatalogRead> {
  // readCatalog says nothing of a default catalog that is not there
  if (opts.workflows === undefined && !(await exists(CATALOG_FILE))) return { warnings: [] };
  const { readCatalog } = await import("../rules/catalog.js");
  return readCatalog(opts.workflows ?? CATALOG_FILE, {
    required: opts.workflows !== undefined,
    ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
  });
}

/** Whether anything is at this path (a file that cannot be read is readCatalog's to report). */
async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** Runs the validation and returns the output and exit code (kept apart from process I/O for tests). */
export async function runValidate(
  paths: string[],
  opts: ValidateOptions,
  color = false,
  log?: Logger,
): Promise<{ output: string; exitCode: number; notes: string[] }> {
  const result = await loadRules(paths);
  const catalog = await readCatalogIfAny(opts);
  const notes = [...catalog.warnings];
  if (result.ruleSet) {
    if (catalog.catalog) {
      const { catalogDiagnostics } = await import("../rules/catalog-checks.js");
      const found = catalogDiagnostics(result.ruleSet.rules, catalog.catalog, opts.workflows ?? CATALOG_FILE);
      // a step the workflow does not have is one error: the warning that the selection may not leave it active
      // would only echo it
      const misspelt = new Set(
        found.filter((d) => d.severity === "error").map((d) => `${d.rule ?? ""}\u0000${d.file}:${d.line}`),
      );
      result.diagnostics = result.diagnostics.filter(
        (d) => !(d.code === "select-excludes" && misspelt.has(`${d.rule ?? ""}\u0000${d.file}:${d.line}`)),
      );
      for (const d of found) result.diagnostics.push(d);
    } else
      notes.push(
        `no workflow catalog (${opts.workflows ?? CATALOG_FILE}): steps, fields and input values were not checked against the workflows; \`flowrules pull\` writes it`,
      );
  }
  if (log) logDiagnostics(log, result.diagnostics);
  if (result.ruleSet)
    log?.event("rules.loaded", { files: result.ruleSet.files.length, rules: result.ruleSet.rules.length });
  const errors = result.diagnostics.some((d) => d.severity === "error");
  const output = DIAGNOSTIC_FORMATS[opts.format](result.diagnostics, {
    color,
    ...(result.ruleSet ? { files: result.ruleSet.files.length, rules: result.ruleSet.rules.length } : {}),
  });
  return { output, exitCode: errors ? EXIT_ERROR : EXIT_OK, notes };
}
