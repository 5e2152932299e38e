/**
 * Comments cite only what exists (CONTRIBUTING.md, "Comments"): every path under src/, docs/, test/, bench/ or
 * scripts/ named in a comment of src/ (or in a README beside the code) resolves, every bare `name.ts` names a file
 * of the repository, and no comment cites a document the repository does not hold.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** The comments of a TypeScript file; a README is all comment. */
function comments(file: string): string[] {
  const text = readFileSync(file, "utf8");
  if (file.endsWith(".md")) return [text];
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]);
}

const SOURCES = walk(join(ROOT, "src")).filter((f) => f.endsWith(".ts") || f.endsWith(".md"));
const NAMES = new Set(["src", "test", "bench", "scripts"].flatMap((d) => walk(join(ROOT, d)).map((f) => f.split("/").pop() ?? "")));

function problems(): string[] {
  const out: string[] = [];
  for (const file of SOURCES) {
    const where = relative(ROOT, file);
    for (const c of comments(file)) {
      for (const m of c.matchAll(/(?<![\w/.-])((?:src|docs|test|bench|scripts)\/[\w./-]*\w)/g)) {
        const path = m[1] ?? "";
        if (!existsSync(join(ROOT, path))) out.push(`${where}: ${path} does not exist`);
      }
      for (const m of c.matchAll(/(?<![\w/.<-])([\w-]+\.ts)\b/g)) {
        const name = m[1] ?? "";
        if (!NAMES.has(name)) out.push(`${where}: ${name} is no file of the repository`);
      }
      // the design notes live in docs/design.md; DESIGN.md and its numbered sections are not in the repository
      for (const m of c.matchAll(/\bDESIGN\b[^\n]{0,20}/g)) out.push(`${where}: cites "${m[0].trim()}" (write docs/design.md and a heading)`);
    }
  }
  return out;
}

describe("references in comments", () => {
  it("resolve: every cited path and file exists, no document outside the repository is cited", () => {
    expect(SOURCES.length).toBeGreaterThan(100);
    expect(problems()).toEqual([]);
  });
});
