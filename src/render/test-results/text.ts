/**
 * Terminal output of `flowrules test`: one table row per case (result / rule / case / where), then each failure with
 * expected vs actual for the instance and field that differ, then the closing `N passed, M failed` line.
 */
import pc from "picocolors";
import {
  brokenFiles,
  counts,
  foundNoTests,
  NO_TESTS_CODE,
  type CaseResult,
  type Failure,
  type TestRun,
} from "../../rule-tests/types.js";
import { terminalSafe } from "../escape.js";
import { saidText } from "./said.js";
import { table } from "../table.js";

type Colors = ReturnType<typeof pc.createColors>;

function where(r: CaseResult): string {
  return `${r.pos.file}:${r.pos.line}:${r.pos.col}`;
}

function label(c: Colors, r: CaseResult): string {
  if (r.status === "pass") return c.green("pass");
  return c.red(r.status === "error" ? "ERROR" : "FAIL");
}

function resultsTable(c: Colors, results: CaseResult[]): string[] {
  // the coloured label takes the columns of its text: the table measures without colour codes
  const [header = "", ...lines] = table([
    ["RESULT", "RULE", "CASE", "FILE"],
    ...results.map((r) => [label(c, r), r.rules.join(", "), r.name, where(r)]),
  ]);
  return [c.bold(header), ...lines];
}

export function failureLines(c: Colors, f: Failure): string[] {
  const who =
    f.instance !== undefined
      ? `instance ${f.instance}${f.instance_name !== undefined ? ` ${JSON.stringify(f.instance_name)}` : ""}: `
      : "";
  const at = f.at ? `${f.at.file}:${f.at.line}:${f.at.col}: ` : "";
  const out = [`  ${c.red("✗")} ${at}${who}${f.subject}`];
  if (f.expected !== undefined) out.push(`      expected: ${c.green(saidText(f.expected))}`);
  if (f.actual !== undefined) out.push(`      actual:   ${c.red(saidText(f.actual))}`);
  for (const [i, w] of (f.why ?? []).entries())
    out.push(`      ${i === 0 ? "why:" : "    "}      ${c.dim(saidText(w))}`);
  return out;
}

export function testsText(run: TestRun, color: boolean): string {
  const c = pc.createColors(color);
  const out: string[] = [];
  if (run.results.length > 0) out.push(...resultsTable(c, run.results));
  const noted = run.results.filter((r) => (r.notes ?? []).length > 0);
  if (noted.length > 0) {
    out.push("", c.bold("Not compared"));
    for (const r of noted) for (const n of r.notes ?? []) out.push(`  ${c.dim("·")} ${r.name}: ${n}`);
  }
  const failed = run.results.filter((r) => r.status !== "pass");
  if (failed.length > 0) {
    out.push("", c.bold("Failures"));
    for (const r of failed) {
      out.push("", `${label(c, r)} ${c.bold(r.rules.join(", "))} › ${r.name}  ${c.dim(`(${where(r)})`)}`);
      for (const f of r.failures) out.push(...failureLines(c, f));
    }
  }
  const broken = brokenFiles(run).length;
  const { passed, failed: nFailed } = counts(run);
  const none =
    foundNoTests(run) && run.results.length === 0 && broken === 0
      ? run.diagnostics.find((d) => d.code === NO_TESTS_CODE)
      : undefined;
  if (none) {
    // nothing ran: said as such (the run fails: a CI step that runs no test must not pass silently)
    out.push("", c.bold(none.message));
    return terminalSafe(`${out.join("\n")}\n`, color);
  }
  const note =
    broken > 0
      ? c.dim(`  (${broken} of them: ${broken === 1 ? "a file" : "files"} that did not load, see the messages above)`)
      : "";
  out.push("", c.bold(`${passed} passed, ${nFailed} failed`) + note);
  return terminalSafe(`${out.join("\n")}\n`, color);
}
