/**
 * `flowrules test`: rule tests against fixture instances with the pure planner — no network, no sandbox. Results
 * table and `N passed, M failed` on stdout, located load errors on stderr, `--junit FILE` for CI; exit 1 on any
 * failure (or, with --require-tests, on any loaded rule without a test).
 */
import { mkdir } from "node:fs/promises";
import { checkOutputFile, writeFailure, writeFileAtomic } from "../fs/write-file.js";
import { dirname } from "node:path";
import { EXIT_ERROR, EXIT_OK, UserError } from "../model/errors.js";
import { testsJunit } from "../render/test-results/junit.js";
import { TEST_RESULT_FORMATS, type TestResultsFormat } from "../render/test-results/index.js";
import { runFailed, runTests } from "../rule-tests/run.js";
import { NO_TESTS_CODE } from "../rule-tests/types.js";
import { useColor, type CommandIO } from "../log/command-io.js";
import { logTestRun } from "../render/events/test.js";
import { readCatalog } from "../rules/catalog.js";
import { CATALOG_FILE } from "../model/defaults.js";

export interface TestCommandOptions {
  paths: string[];
  junit?: string;
  requireTests: boolean;
  /** the workflow catalog (default flowrules.workflows.json, when present) */
  workflows?: string;
  /** --rule: only the cases naming a rule these names or globs select */
  rules?: string[];
  /** the results on stdout: text (default) or json (schemas/test-results.schema.json) */
  format?: TestResultsFormat;
}

export async function testCommand(opts: TestCommandOptions, io: CommandIO): Promise<number> {
  // a folder or a device at --junit is one line before the tests run, not a system error after them
  if (opts.junit) await checkOutputFile(opts.junit, { createFolder: true });
  const catalog = await readCatalog(opts.workflows ?? CATALOG_FILE, { required: opts.workflows !== undefined });
  for (const w of catalog.warnings) io.stderr(`warning: ${w}\n`);
  const run = await runTests(opts.paths, {
    requireTests: opts.requireTests,
    ...(opts.rules && opts.rules.length > 0 ? { rules: opts.rules } : {}),
    ...(catalog.catalog ? { catalog: catalog.catalog } : {}),
  });
  for (const d of run.diagnostics) {
    // no test file at all: the text results say it as their last line
    if (d.code === NO_TESTS_CODE && (opts.format ?? "text") === "text") continue;
    // a problem of the whole run (a --rule pattern matching nothing) has no file: named as plan names it
    const at = d.line > 0 ? `${d.file}:${d.line}:${d.col}` : d.file || "flowrules";
    io.stderr(`${at}  ${d.severity}  ${d.message}${d.rule ? `  (${d.rule})` : ""}\n`);
  }
  if (io.log) logTestRun(io.log, run);
  io.stdout(TEST_RESULT_FORMATS[opts.format ?? "text"](run, { color: useColor(io) }));
  if (opts.junit) {
    const junit = opts.junit;
    await mkdir(dirname(junit), { recursive: true }).catch((err: unknown) => {
      throw new UserError(`cannot write ${junit}: ${writeFailure(err)}`);
    });
    await writeFileAtomic(opts.junit, testsJunit(run));
  }
  return runFailed(run) ? EXIT_ERROR : EXIT_OK;
}
