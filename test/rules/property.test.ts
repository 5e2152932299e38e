/** Random edits of valid files never crash the loader: the result is a located error or a valid set. */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileSources } from "../../src/rules/index.js";
import { FIXTURES } from "./helpers.js";

const SEEDS = ["rules/expenses.yaml", "rules/onboarding.yaml", "rules/purchases.yaml", `${FIXTURES}/valid/full.yaml`].map((f) => readFileSync(f, "utf8"));

/** Characters that matter to YAML, JSONata and templates, plus some letters and digits. */
const SIGNIFICANT = [..." \n\t:-[]{},'\"#&*!|>%@`{}$.()<=~0123456789abcxyz_", "{{", "}}", "- ", ": "];

type Edit =
  | { op: "delete"; at: number; len: number }
  | { op: "insert"; at: number; text: string }
  | { op: "replace"; at: number; text: string }
  | { op: "dupLine"; line: number }
  | { op: "dropLine"; line: number }
  | { op: "indent"; line: number; by: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), len: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), text: fc.array(fc.constantFrom(...SIGNIFICANT), { minLength: 1, maxLength: 4 }).map((a) => a.join("")) }),
  fc.record({ op: fc.constant("replace" as const), at: fc.nat(), text: fc.constantFrom(...SIGNIFICANT) }),
  fc.record({ op: fc.constant("dupLine" as const), line: fc.nat() }),
  fc.record({ op: fc.constant("dropLine" as const), line: fc.nat() }),
  fc.record({ op: fc.constant("indent" as const), line: fc.nat(), by: fc.integer({ min: -4, max: 4 }) }),
);

function apply(text: string, e: Edit): string {
  const lines = text.split("\n");
  switch (e.op) {
    case "delete": {
      const at = e.at % (text.length + 1);
      return text.slice(0, at) + text.slice(at + e.len);
    }
    case "insert": {
      const at = e.at % (text.length + 1);
      return text.slice(0, at) + e.text + text.slice(at);
    }
    case "replace": {
      const at = e.at % Math.max(1, text.length);
      return text.slice(0, at) + e.text + text.slice(at + 1);
    }
    case "dupLine": {
      const i = e.line % lines.length;
      lines.splice(i, 0, lines[i] ?? "");
      return lines.join("\n");
    }
    case "dropLine":
      lines.splice(e.line % lines.length, 1);
      return lines.join("\n");
    case "indent": {
      const i = e.line % lines.length;
      const l = lines[i] ?? "";
      lines[i] = e.by >= 0 ? " ".repeat(e.by) + l : l.replace(new RegExp(`^ {0,${-e.by}}`), "");
      return lines.join("\n");
    }
  }
}

describe("loader robustness", () => {
  it("random edits yield a located error or a valid rule set, never a crash", () => {
    fc.assert(
      fc.property(fc.nat({ max: SEEDS.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 4 }), (seed, edits) => {
        const text = edits.reduce(apply, SEEDS[seed]!);
        const lineCount = text.split("\n").length;
        const r = compileSources([{ file: "edited.yaml", text }]);
        expect(r.diagnostics.filter((d) => d.code === "internal")).toEqual([]);
        const errors = r.diagnostics.filter((d) => d.severity === "error");
        if (r.ruleSet) {
          expect(errors).toEqual([]);
        } else {
          expect(errors.length).toBeGreaterThan(0);
        }
        for (const d of r.diagnostics) {
          expect(d.file).toBe("edited.yaml");
          expect(d.line).toBeGreaterThanOrEqual(1);
          expect(d.line).toBeLessThanOrEqual(lineCount);
          expect(d.col).toBeGreaterThanOrEqual(1);
          expect(d.message.length).toBeGreaterThan(0);
          expect(d.message).not.toMatch(/undefined|\[object Object\]/);
        }
      }),
      { numRuns: Number(process.env.FLOWRULES_FC_RUNS ?? 600) },
    );
  });
});
