/** defined(): the keys whose value is undefined are absent; every other value, falsy ones too, stays in order. */
import { describe, expect, it } from "vitest";
import { defined } from "../../src/model/defined.js";

describe("defined", () => {
  it("leaves out exactly the undefined values, keeping the order of the rest", () => {
    const out = defined({ a: 1, b: undefined, c: null, d: 0, e: "", f: false, g: [] as number[] });
    expect(Object.keys(out)).toEqual(["a", "c", "d", "e", "f", "g"]);
    expect("b" in out).toBe(false);
    expect(out).toEqual({ a: 1, c: null, d: 0, e: "", f: false, g: [] });
  });

  it("spreads like the conditional copies it replaces, over many random objects", () => {
    let seed = 47;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const values = [undefined, null, 0, 1, "", "x", false, true, { k: 1 }];
    for (let i = 0; i < 500; i++) {
      const fields: Record<string, unknown> = {};
      for (const key of ["p", "q", "r", "s"]) fields[key] = values[Math.floor(next() * values.length)];
      const byHand = {
        head: 1,
        ...(fields.p !== undefined ? { p: fields.p } : {}),
        ...(fields.q !== undefined ? { q: fields.q } : {}),
        ...(fields.r !== undefined ? { r: fields.r } : {}),
        ...(fields.s !== undefined ? { s: fields.s } : {}),
      };
      const out = { head: 1, ...defined(fields) };
      expect(JSON.stringify(out)).toBe(JSON.stringify(byHand));
      expect(Object.keys(out)).toEqual(Object.keys(byHand));
    }
  });

  it("types: a key that may be undefined becomes optional, the others stay required", () => {
    const v: { a: number; b?: string } = defined({ a: 1, b: undefined as string | undefined });
    // @ts-expect-error b is string | undefined at most, never number
    const w: { b?: number } = defined({ b: "x" as string | undefined });
    expect([v.a, w]).toEqual([1, { b: "x" }]);
  });
});
