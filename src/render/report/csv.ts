/**
 * A report's rows as CSV (RFC 4180: comma-separated, CRLF, fields quoted when they hold a comma, quote or line
 * break), one column per report column. Lists (tags, checklist values) are joined with "; ". A text cell starting
 * with = + - @ (or a tab / CR) gets a leading apostrophe so spreadsheet programs show it instead of running it as a
 * formula: instance names and field values are user input (CSV injection).
 */
import type { PlannedReport } from "../../plan/types.js";

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(v: unknown): string {
  let s: string;
  if (v === null || v === undefined) s = "";
  else if (typeof v === "string") s = FORMULA_START.test(v) ? `'${v}` : v;
  else if (typeof v === "number" || typeof v === "boolean") s = String(v);
  else if (Array.isArray(v)) s = csvText(v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join("; "));
  else s = JSON.stringify(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Text joined from a list is user input as well. */
function csvText(s: string): string {
  return FORMULA_START.test(s) ? `'${s}` : s;
}

export function reportCsv(r: PlannedReport): string {
  return [...reportCsvPieces(r)].join("");
}

/** Lines written at once: a report may hold a row per matched instance, never one string for the file. */
const LINE_BATCH = 1000;

/** The CSV in pieces of LINE_BATCH lines, as `--report-dir` writes it. */
export function* reportCsvPieces(r: PlannedReport): Generator<string> {
  let lines = [r.columns.map(csvCell).join(",")];
  // by index: the rows may be made as they are read (src/plan/lazy-rows.ts)
  for (let i = 0; i < r.rows.length; i++) {
    const row = r.rows[i] ?? {};
    lines.push(r.columns.map((c) => csvCell(row[c])).join(","));
    if (lines.length >= LINE_BATCH) {
      yield `${lines.join("\r\n")}\r\n`;
      lines = [];
    }
  }
  if (lines.length > 0) yield `${lines.join("\r\n")}\r\n`;
}
