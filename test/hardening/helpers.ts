/** Shared checks of the hardening suite. */
import { expect } from "vitest";
import type { LoadResult } from "../../src/rules/types.js";
import { Prng } from "../../src/sandbox/prng.js";

/**
 * The loader's contract on any input: a valid rule set with no errors, or at least one error — and every diagnostic
 * located inside the file (1-based line and column within the text), short, and never an internal error.
 */
export function expectLocated(r: LoadResult, text: string, file = "hostile.yaml"): void {
  const lineCount = text.split("\n").length;
  expect(
    r.diagnostics.filter((d) => d.code === "internal"),
    "internal error",
  ).toEqual([]);
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  if (r.ruleSet) expect(errors).toEqual([]);
  else expect(errors.length).toBeGreaterThan(0);
  for (const d of r.diagnostics) {
    expect(d.file).toBe(file);
    expect(d.line, d.message).toBeGreaterThanOrEqual(1);
    expect(d.line, d.message).toBeLessThanOrEqual(lineCount);
    expect(d.col, d.message).toBeGreaterThanOrEqual(1);
    expect(d.message.length).toBeGreaterThan(0);
    expect(d.message.length, d.message.slice(0, 200)).toBeLessThanOrEqual(1001);
    expect(d.message).not.toMatch(/\[object Object\]|Maximum call stack/);
    expect((d.rule ?? "").length).toBeLessThanOrEqual(81);
  }
}

/** A deterministic generator for seeded choices outside fast-check: the sandbox's own (mulberry32). */
export function prng(seed: number): () => number {
  const p = new Prng(seed);
  return () => p.next();
}
