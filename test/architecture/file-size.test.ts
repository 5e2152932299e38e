/**
 * No source file over 400 lines (CONTRIBUTING.md, "Ground rules"): a file that grows past it is split along a seam,
 * so each file holds one job a reader takes in at once. Generated files (`*.generated.ts`) are written by
 * `npm run schema`, never read as code, and do not count.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");
const MAX_LINES = 400;

/** Lines as `wc -l` counts them: a last line without a newline still counts. */
function lineCount(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

const FILES = readdirSync(SRC, { recursive: true, encoding: "utf8" })
  .map((f) => f.split("\\").join("/"))
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".generated.ts"));

describe("source file size", () => {
  it("counts lines as wc -l does", () => {
    expect([lineCount(""), lineCount("a"), lineCount("a\n"), lineCount("a\nb"), lineCount("a\n\nb\n")]).toEqual([
      0, 1, 1, 2, 3,
    ]);
  });

  it(`every non-generated src/**/*.ts file is at most ${MAX_LINES} lines`, () => {
    expect(FILES.length).toBeGreaterThan(100);
    const over = FILES.map((f) => ({ file: `src/${f}`, lines: lineCount(readFileSync(join(SRC, f), "utf8")) })).filter(
      (f) => f.lines > MAX_LINES,
    );
    expect(over).toEqual([]);
  });

  it("generated files are the only ones left out", () => {
    const all = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const generated = all.filter((f) => f.endsWith(".generated.ts"));
    // the compiled validators of the rule-file and rule-test schemas
    expect(generated.length).toBeGreaterThanOrEqual(2);
    expect(FILES.length + generated.length).toBe(all.length);
  });
});
