import { compileSources } from "../../src/rules/index.js";
import type { Diagnostic, LoadResult } from "../../src/rules/types.js";

export const FIXTURES = "test/fixtures/rules";

/** Compiles one in-memory file. */
export function loadText(text: string, file = "mem.yaml"): LoadResult {
  return compileSources([{ file, text }]);
}

export function errorsOf(r: LoadResult): Diagnostic[] {
  return r.diagnostics.filter((d) => d.severity === "error");
}

export function warningsOf(r: LoadResult): Diagnostic[] {
  return r.diagnostics.filter((d) => d.severity === "warning");
}

/** A minimal valid rule file around the given rule body lines (indented 4 spaces). */
export function ruleFile(body: string, name = "r"): string {
  return `version: 1\nrules:\n  - name: ${name}\n${body
    .split("\n")
    .map((l) => (l === "" ? l : `    ${l}`))
    .join("\n")}\n`;
}
