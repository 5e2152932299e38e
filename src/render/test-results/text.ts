/**
 * Terminal output of `flowrules test`: one table row per case (result / rule / case / where), then each failure with
 * expected vs actual for the instance and field that differ, then the closing `N passed, M failed` line.
 */
import pc from "picocolors";
import { brokenFiles, counts, type CaseResult, type Failure, type TestRun } from "../../rule-tests/types.js";
import { terminalSafe } from "../escape.js";
import { saidText } from "./said.js";

type Colors = ReturnType<typeof pc.createColors>;

function where(r: CaseResult): string {
  return `${r.pos.file}:${r.pos.line}:${r.pos.col}`;
}

function label(c: Colors, r: CaseResult): string {
  if (r.status === "pass") return c.green("pass");
  return c.red(r.status === "error" ? "ERROR" : "FAIL");
}

function table(c: Colors, results: CaseResult[]): string[] {
  const rows = results.map((r) => [r.status, r.rules.join(", "), r.name, where(r)]);
  const header = ["RESULT", "RULE", "CASE", "FILE"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[], first: string): string =>
    [first + " ".repeat(Math.max(0, (widths[0] ?? 0) - (cells[0] ?? "").length)), ...cells.slice(1).map((x, i) => x.padEnd(widths[i + 1] ?? 0))]
      .join("  ")
      .trimEnd();
  return [
    c.bold(line(header, header[0] ?? "")),
    ...results.map((r, i) => line(rows[i] ?? [], label(c, r))),
  ];
}

export function failureLines(c: Colors, f: Failure): string[] {
  const who = f.instance !== undefined ? `instance ${f.instance}${f.instance_name !== undefined ? ` ${JSON.stringify(f.instance_name)}` : ""}: ` : "";
  const at = f.at ? `${f.at.file}:${f.at.line}:${f.at.col}: ` : "";
  const out = [`  ${c.red("✗")} ${at}${who}${f.subject}`];
  if (f.expected !== undefined) out.push(`      expected: ${c.green(saidText(f.expected))}`);
  if (f.actual !== undefined) out.push(`      actual:   ${c.red(saidText(f.actual))}`);
  for (const [i, w] of (f.why ?? []).entries()) out.push(`      ${i === 0 ? "why:" : "    "}      ${c.dim(saidText(w))}`);
  return out;
}

export function testsText(run: TestRun, color: boolean): string {
  const c = pc.createColors(color);
  const out: string[] = [];
  if (run.results.length > 0) out.push(...table(c, run.results));
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
  const note = broken > 0 ? c.dim(`  (${broken} of them: ${broken === 1 ? "a file" : "files"} that did not load, see the messages above)`) : "";
  out.push("", c.bold(`${passed} passed, ${nFailed} failed`) + note);
  return terminalSafe(`${out.join("\n")}\n`, color);
}
