/** Splitting `when` at its top-level and/or, and evaluating each clause in the rule's context. */
import { describe, expect, it } from "vitest";
import { planBindings } from "../../src/engine/context.js";
import { decidingClauses, explainWhen, splitClauses } from "../../src/engine/explain/index.js";
import { compileJsonata } from "../../src/rules/jsonata-compile.js";

const at = () => ({ file: "r.yaml", line: 1, col: 1 });

describe("splitClauses", () => {
  it("splits at top-level or first (and binds tighter), then and", () => {
    expect(splitClauses("a = 1 and b = 2 or c = 3")).toEqual({
      source: "a = 1 and b = 2 or c = 3",
      op: "or",
      parts: [
        { source: "a = 1 and b = 2", op: "and", parts: [{ source: "a = 1" }, { source: "b = 2" }] },
        { source: "c = 3" },
      ],
    });
  });

  it("leaves and/or inside brackets, strings, names, comments and path steps alone", () => {
    expect(splitClauses("$count(x[a and b]) > 0")).toEqual({ source: "$count(x[a and b]) > 0" });
    expect(splitClauses('name = "cats and dogs"')).toEqual({ source: 'name = "cats and dogs"' });
    expect(splitClauses("`rock and roll` = 1 /* or not */")).toEqual({ source: "`rock and roll` = 1 /* or not */" });
    expect(splitClauses("fields.or = 1")).toEqual({ source: "fields.or = 1" });
    expect(splitClauses("order = 1 and android")).toMatchObject({
      op: "and",
      parts: [{ source: "order = 1" }, { source: "android" }],
    });
  });

  it("strips parentheses around the whole expression, not around its parts", () => {
    expect(splitClauses("(a or b)")).toMatchObject({ source: "a or b", op: "or" });
    expect(splitClauses("(a) and (b or c)")).toMatchObject({
      op: "and",
      parts: [{ source: "a" }, { source: "b or c", op: "or", parts: [{ source: "b" }, { source: "c" }] }],
    });
    expect(splitClauses("(x := 1; x and true)")).toEqual({ source: "(x := 1; x and true)" });
  });
});

describe("explainWhen", () => {
  it("evaluates the whole and each clause in the same context, and names the deciding ones", async () => {
    const c = compileJsonata(
      "fields.amount < 100 and (fields.currency = 'EUR' or $daysSince(instance.started_time) > 30)",
      at,
      "when",
    );
    if (!c.ok) throw new Error(c.diagnostic.message);
    const ctx = {
      instance: { started_time: "2025-01-01T00:00:00Z" },
      fields: { amount: 250, currency: "USD" },
      snapshot: undefined,
      tags: [],
      now: "2025-01-11T00:00:00Z",
    };
    const e = await explainWhen(c.expr, ctx, planBindings(new Date("2025-01-11T00:00:00Z")));
    expect(e).toEqual({
      source: c.expr.source,
      value: false,
      holds: false,
      op: "and",
      parts: [
        { source: "fields.amount < 100", value: false, holds: false },
        {
          source: "fields.currency = 'EUR' or $daysSince(instance.started_time) > 30",
          value: false,
          holds: false,
          op: "or",
          parts: [
            { source: "fields.currency = 'EUR'", value: false, holds: false },
            { source: "$daysSince(instance.started_time) > 30", value: false, holds: false },
          ],
        },
      ],
    });
    expect(decidingClauses(e).map((x) => x.source)).toEqual([
      "fields.amount < 100",
      "fields.currency = 'EUR'",
      "$daysSince(instance.started_time) > 30",
    ]);
  });

  it("a clause that reads a missing field yields no value, and an error is shown on the clause", async () => {
    const c = compileJsonata("fields.amount < 100 or $number(fields.note) > 1", at, "when");
    if (!c.ok) throw new Error(c.diagnostic.message);
    const e = await explainWhen(
      c.expr,
      { instance: {}, fields: { note: "abc" }, snapshot: undefined, tags: [], now: "" },
      planBindings(new Date()),
    );
    expect(e.parts?.[0]).toEqual({ source: "fields.amount < 100", holds: false });
    expect(e.parts?.[1]?.error).toMatch(/Unable to cast value to a number/);
    expect(e.error).toBeDefined();
  });
});
