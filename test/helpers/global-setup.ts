/**
 * Once per run (vitest globalSetup): the tests' temp dir is a fresh folder (TMPDIR, inherited by the workers), and
 * the run fails when a test left anything in it. With .ci/run's JSON report (VITEST_JSON_REPORT) the failure is
 * also written into the report, so its "N passed, M failed" line counts it. The folder is removed either way.
 * Tests skipped for a missing program (./programs.ts) are noted in a file beside it and summed up in one line.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SKIPS_ENV, skipSummary } from "./skips.js";

export default function setup(): () => void {
  const outer = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), "flowrules-tests-"));
  // outside the tests' temp dir, which must be empty at the end
  const skips = mkdtempSync(join(tmpdir(), "flowrules-skips-"));
  process.env.TMPDIR = dir;
  process.env[SKIPS_ENV] = join(skips, "notes.jsonl");
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    const notes = existsSync(join(skips, "notes.jsonl"))
      ? readFileSync(join(skips, "notes.jsonl"), "utf8").split("\n")
      : [];
    rmSync(skips, { recursive: true, force: true });
    delete process.env[SKIPS_ENV];
    const summary = skipSummary(notes);
    if (summary) console.log(`\n${summary}\n`);
    const left = readdirSync(dir);
    rmSync(dir, { recursive: true, force: true });
    if (left.length === 0) return;
    const message = `the tests left ${left.length} entr${left.length === 1 ? "y" : "ies"} in their temp dir (make them with tempDir() from test/helpers/temp.ts): ${left.slice(0, 10).join(", ")}${left.length > 10 ? ", …" : ""}`;
    recordInReport(message);
    // an error thrown here is printed with a stack and leaves the exit code at 0: say it in one line, exit 1
    console.error(`\nFAIL ${message}\n`);
    process.exitCode = 1;
  };
}

/** One failed suite more in vitest's JSON report, when .ci/run asked for one. */
function recordInReport(message: string): void {
  const report = process.env.VITEST_JSON_REPORT;
  if (!report || !existsSync(report)) return;
  const r = JSON.parse(readFileSync(report, "utf8")) as Record<string, unknown> & { testResults?: unknown[] };
  r.numFailedTestSuites = Number(r.numFailedTestSuites ?? 0) + 1;
  r.numTotalTestSuites = Number(r.numTotalTestSuites ?? 0) + 1;
  r.success = false;
  r.testResults = [
    ...(r.testResults ?? []),
    { name: "temp dir check (test/helpers/global-setup.ts)", status: "failed", message, assertionResults: [] },
  ];
  writeFileSync(report, JSON.stringify(r));
}
