/** Shared checks of the hardening suite. */
import { expect } from "vitest";
import type { LoadResult } from "../../src/rules/types.js";

/**
 * The loader's contract on any input: a valid rule set with no errors, or at least one error — and every diagnostic
 * located inside the file (1-based line and column within the text), short, and never an internal error.
 */
export function expectLocated(r: LoadResult, text: string, file = "hostile.yaml"): void {
  const lineCount = text.split("\n").length;
  expect(r.diagnostics.filter((d) => d.code === "internal"), "internal error").toEqual([]);
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

/** A deterministic PRNG (mulberry32) for seeded choices outside fast-check. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
