/**
 * JUnit XML for CI (the de-facto schema Jenkins, GitLab and GitHub test reporters read): one <testsuite> per test
 * file, one <testcase> per case (classname = rule, name = case), <failure> with expected vs actual, <error> for
 * problems in the test file itself; files that did not load become one errored testcase each.
 */
import { failureLines } from "./text.js";
import pc from "picocolors";
import { brokenFiles, type CaseResult, type TestRun } from "../../rule-tests/types.js";
import { saidText } from "./said.js";

/** XML 1.0 text: escape markup, drop characters XML cannot carry at all (control characters, lone surrogates). */
export function xmlEscape(s: string): string {
  return s
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

const plain = pc.createColors(false);

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function testcase(r: CaseResult): string {
  const attrs = `classname="${xmlEscape(r.rules.join(", "))}" name="${xmlEscape(r.name)}" file="${xmlEscape(r.pos.file)}" line="${r.pos.line}" time="${seconds(r.durationMs)}"`;
  if (r.status === "pass") return `    <testcase ${attrs}/>`;
  const tag = r.status === "error" ? "error" : "failure";
  const first = r.failures[0];
  const detail =
    first && first.expected !== undefined
      ? `: expected ${saidText(first.expected)}, actual ${first.actual !== undefined ? saidText(first.actual) : "?"}`
      : "";
  const full = first
    ? `${first.instance !== undefined ? `instance ${first.instance}: ` : ""}${first.subject}${detail}`
    : r.status;
  const message = full.length > 300 ? `${full.slice(0, 299)}…` : full;
  const body = r.failures.flatMap((f) => failureLines(plain, f)).join("\n");
  return [
    `    <testcase ${attrs}>`,
    `      <${tag} message="${xmlEscape(message)}" type="${tag === "error" ? "TestFileError" : "AssertionError"}">${xmlEscape(body)}</${tag}>`,
    "    </testcase>",
  ].join("\n");
}

function suite(
  name: string,
  cases: string[],
  stats: { tests: number; failures: number; errors: number; ms: number },
): string {
  return [
    `  <testsuite name="${xmlEscape(name)}" tests="${stats.tests}" failures="${stats.failures}" errors="${stats.errors}" skipped="0" time="${seconds(stats.ms)}">`,
    ...cases,
    "  </testsuite>",
  ].join("\n");
}

export function testsJunit(run: TestRun): string {
  const byFile = new Map<string, CaseResult[]>();
  for (const r of run.results) byFile.set(r.pos.file, [...(byFile.get(r.pos.file) ?? []), r]);
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let errors = 0;
  let ms = 0;
  for (const [file, results] of byFile) {
    const s = {
      tests: results.length,
      failures: results.filter((r) => r.status === "fail").length,
      errors: results.filter((r) => r.status === "error").length,
      ms: results.reduce((n, r) => n + r.durationMs, 0),
    };
    tests += s.tests;
    failures += s.failures;
    errors += s.errors;
    ms += s.ms;
    suites.push(suite(file, results.map(testcase), s));
  }
  for (const file of brokenFiles(run)) {
    const messages = run.diagnostics
      .filter((d) => d.file === file && d.severity === "error")
      .map((d) => `${d.file}:${d.line}:${d.col}  ${d.message}`);
    tests += 1;
    errors += 1;
    suites.push(
      suite(
        file,
        [
          `    <testcase classname="(load)" name="${xmlEscape(file)}" file="${xmlEscape(file)}" time="0.000">`,
          `      <error message="${xmlEscape(messages[0] ?? "did not load")}" type="LoadError">${xmlEscape(messages.join("\n"))}</error>`,
          "    </testcase>",
        ],
        { tests: 1, failures: 0, errors: 1, ms: 0 },
      ),
    );
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="flowrules test" tests="${tests}" failures="${failures}" errors="${errors}" time="${seconds(ms)}">`,
    ...suites,
    "</testsuites>",
    "",
  ].join("\n");
}
