/** Valid files compile to the structure the engine consumes. */
import { createHash } from "node:crypto";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRules } from "../../src/rules/index.js";
import type { CompiledRule, CompiledValue } from "../../src/rules/types.js";
import { FIXTURES } from "./helpers.js";
import { tempDir } from "../helpers/temp.js";

const FULL = `${FIXTURES}/valid/full.yaml`;

async function full(): Promise<CompiledRule[]> {
  const r = await loadRules([FULL]);
  expect(r.diagnostics).toEqual([]);
  return r.ruleSet!.rules;
}

/** Evaluates a compiled value the way the engine does, to prove templates work end to end. */
async function evaluate(v: CompiledValue, input: unknown): Promise<unknown> {
  switch (v.t) {
    case "literal":
      return v.value;
    case "array":
      return Promise.all(v.items.map((x) => evaluate(x, input)));
    case "object":
      return Object.fromEntries(await Promise.all(v.entries.map(async ([k, x]) => [k, await evaluate(x, input)])));
    case "template": {
      const vals = await Promise.all(v.parts.map((p) => (typeof p === "string" ? p : p.expr.evaluate(input))));
      return v.whole ? vals[0] : vals.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join("");
    }
  }
}

describe("compilation of valid rules", () => {
  it("compiles rule, workflow, fields, select and limits as written", async () => {
    const [approve, tidy] = await full();
    expect(approve).toMatchObject({
      name: "approve",
      description: "approve small ones",
      pos: { file: FULL, line: 4, col: 5 },
      workflow: { id: 1042 },
      fields: { amount: { step: 20111, action: 50222 }, currency: { step: 20111, action: 50223 } },
      select: { status: ["running"], active_step_id: "20111", tags: "expenses", started_time_after: "-P30D", deadline_before: "now" },
      limits: { max_instances: 5 },
    });
    expect(tidy).toMatchObject({ workflow: { name: "Employee onboarding" }, limits: {}, actions: [{ kind: "abort" }] });
    expect(tidy!.when).toBeUndefined();
  });

  it("compiles `when` once, with its position", async () => {
    const [approve] = await full();
    expect(approve!.when!.source).toBe('fields.amount < 100\n  and fields.currency = "EUR"');
    expect(approve!.when!.pos).toEqual({ file: FULL, line: 24, col: 7 });
    expect(await approve!.when!.expr.evaluate({ fields: { amount: 50, currency: "EUR" } })).toBe(true);
    expect(await approve!.when!.expr.evaluate({ fields: { amount: 500, currency: "EUR" } })).toBe(false);
  });

  it("compiles step actions with literal, whole and mixed templates", async () => {
    const [approve] = await full();
    const a = approve!.actions[0]!;
    expect(a.kind).toBe("complete_step");
    if (a.kind !== "complete_step") return;
    expect(a.step).toBe(20111);
    expect(a.pos).toEqual({ file: FULL, line: 27, col: 9 });
    expect(a.inputs.map((i) => i.action)).toEqual([50230, 50231, 50240]);
    const [text, date, checks] = a.inputs.map((i) => i.value);
    expect(text).toMatchObject({ t: "object", entries: [["inputValue", { t: "template", whole: false }]] });
    expect(date).toMatchObject({ t: "object", entries: [["date", { t: "template", whole: true }]] });
    const input = { fields: { amount: 42, currency: "EUR" } };
    expect(await evaluate(text!, input)).toEqual({ inputValue: "Approved 42 EUR" });
    expect(await evaluate(checks!, input)).toEqual({ inputValue: { itemsChecked: ["Receipt attached", "VAT valid"], itemsNotChecked: [] } });
    const d = (await evaluate(date!, input)) as { date: unknown };
    expect(typeof d.date).toBe("string");
    // the template's position is that of the expression inside the YAML string
    if (date?.t === "object") {
      const tpl = date.entries[0]![1];
      expect(tpl.t === "template" && typeof tpl.parts[0] !== "string" ? tpl.parts[0]!.pos : undefined).toEqual({ file: FULL, line: 33, col: 34 });
    }
  });

  it("keeps template-free values literal", async () => {
    const r = await loadRules([`${FIXTURES}/../../../rules/onboarding.yaml`]);
    expect(r.ruleSet?.rules[0]?.actions).toEqual([{ kind: "abort", pos: expect.objectContaining({ line: 11 }) }]);
  });

  it("normalises report group_by and columns to alias form, with default columns", async () => {
    const [, , byAmount] = await full();
    expect(byAmount!.actions).toEqual([
      { kind: "report", group_by: "fields.amount", columns: ["id", "name", "status"], pos: expect.any(Object) },
      {
        kind: "report",
        group_by: "fields.amount",
        columns: ["id", "fields.amount", "fields.amount", "status"],
        title: "Amounts",
        pos: expect.any(Object),
      },
    ]);
  });

  it("digest is sha256 over the files' contents in order; files are listed in order", async () => {
    const dir = await tempDir("flowrules-");
    await mkdir(join(dir, "sub"));
    const a = "version: 1\nrules: []\n";
    const b = "version: 1\nrules:\n  - { name: b, workflow: 1, actions: [abort] }\n";
    await writeFile(join(dir, "sub", "b.yml"), b);
    await writeFile(join(dir, "a.yaml"), a);
    await writeFile(join(dir, "a.test.yaml"), "this: is a rule test, not a rule file");
    await writeFile(join(dir, "notes.txt"), "ignored");
    const r = await loadRules([dir]);
    expect(r.diagnostics).toEqual([]);
    expect(r.ruleSet!.files).toEqual([join(dir, "a.yaml"), join(dir, "sub", "b.yml")]);
    expect(r.ruleSet!.digest).toBe(createHash("sha256").update(a).update(b).digest("hex"));
    const again = await loadRules([join(dir, "a.yaml"), join(dir, "sub", "b.yml"), dir]);
    expect(again.ruleSet!.files).toHaveLength(2);
  });

  it("`only` keeps the named rules and rejects unknown names with a suggestion", async () => {
    const r = await loadRules([FULL], { only: ["tidy"] });
    expect(r.ruleSet!.rules.map((x) => x.name)).toEqual(["tidy"]);
    const bad = await loadRules([FULL], { only: ["tidyy"] });
    expect(bad.ruleSet).toBeUndefined();
    expect(bad.diagnostics[0]!.message).toMatch(/no rule named "tidyy".*did you mean "tidy"\?/);
  });

  it("a missing path and an empty folder are errors", async () => {
    const dir = await tempDir("flowrules-empty-");
    const r = await loadRules(["does/not/exist", dir]);
    expect(r.diagnostics.map((d) => d.message)).toEqual([`no such file or folder: does/not/exist`, `no rule files (*.yaml, *.yml) in ${dir}`]);
  });

  it("the starter rule set validates cleanly", async () => {
    const r = await loadRules(["rules/"]);
    expect(r.diagnostics).toEqual([]);
    const names = r.ruleSet!.rules.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(["auto-approve-small-expenses", "abort-abandoned-onboardings", "overdue-expenses-by-tag", "note-large-purchases"]));
    const kinds = new Set(r.ruleSet!.rules.flatMap((x) => x.actions.map((a) => a.kind)));
    expect([...kinds].sort()).toEqual(["abort", "complete_step", "report", "save_step"]);
    for (const f of r.ruleSet!.files) {
      expect((await readFile(f, "utf8")).split("\n")[0]).toBe("# yaml-language-server: $schema=../schemas/rules.schema.json");
    }
  });
});
