/**
 * The examples in docs/writing-rules.md and README.md cannot drift: every YAML block of a rule file validates with no
 * error, and every rule-test block runs, with the pure planner, against the rule blocks of its page and passes.
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileSources } from "../../src/rules/index.js";
import { runTests } from "../../src/rule-tests/run.js";
import { tempDir } from "../helpers/temp.js";

const PAGES = ["docs/writing-rules.md", "README.md"];

/** The ```yaml blocks of a page, with the line each starts on. */
function yamlBlocks(page: string): Array<{ text: string; line: number }> {
  const lines = readFileSync(page, "utf8").split("\n");
  const out: Array<{ text: string; line: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== "```yaml") continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]?.trim() !== "```") end++;
    out.push({ text: `${lines.slice(start, end).join("\n")}\n`, line: start + 1 });
    i = end;
  }
  return out;
}

const isRuleFile = (t: string): boolean => /^version: 1$/m.test(t) && /^rules:/m.test(t);
const isTestFile = (t: string): boolean => /^version: 1$/m.test(t) && /^tests:/m.test(t);

describe("examples in the docs", () => {
  for (const page of PAGES) {
    const blocks = yamlBlocks(page);
    const rules = blocks.filter((b) => isRuleFile(b.text));
    const tests = blocks.filter((b) => isTestFile(b.text));

    for (const b of rules) {
      it(`${page}:${b.line}: the rule file validates`, async () => {
        const r = await compileSources([{ file: `${page}:${b.line}`, text: b.text }]);
        expect(r.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.line}:${d.col} ${d.message}`)).toEqual([]);
        expect(r.ruleSet?.rules.length ?? 0).toBeGreaterThan(0);
      });
    }

    for (const b of tests) {
      it(`${page}:${b.line}: the rule tests pass against the page's rules`, async () => {
        const dir = await tempDir();
        await mkdir(join(dir, "rules"));
        // each rule block as its own file; a rule named twice on the page (an example shown again) is kept once
        const seen = new Set<string>();
        for (const [i, r] of rules.entries()) {
          const names = [...r.text.matchAll(/^ {2}- name: (\S+)/gm)].map((m) => m[1] ?? "");
          if (names.some((n) => seen.has(n))) continue;
          names.forEach((n) => seen.add(n));
          await writeFile(join(dir, "rules", `block-${i}.yaml`), r.text);
        }
        await writeFile(join(dir, "rules", "example.test.yaml"), b.text);
        const run = await runTests([join(dir, "rules")]);
        expect(run.diagnostics.filter((d) => d.severity === "error").map((d) => d.message)).toEqual([]);
        expect(run.results.length).toBeGreaterThan(0);
        const failed = run.results.filter((r) => r.status !== "pass").map((r) => ({ name: r.name, failures: r.failures.map((f) => `${f.subject}: expected ${JSON.stringify(f.expected)}, actual ${JSON.stringify(f.actual)}`) }));
        expect(failed).toEqual([]);
        // a case that states some inputs says which others it did not compare (the page's sample states one of two)
        if (page === "docs/writing-rules.md" && b.text.includes("inputs: { 50230")) {
          const notes = run.results.flatMap((r) => r.notes ?? []);
          expect(notes.join("\n")).toMatch(/input 50231 .*not compared/);
        }
      });
    }
  }
});
