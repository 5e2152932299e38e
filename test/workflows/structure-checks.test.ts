/** The pure structure checks and name resolution, offline: a compiled rule against a workflow structure. */
import { describe, expect, it } from "vitest";
import { compileSources } from "../../src/rules/index.js";
import { checkRuleStructure, hasNames } from "../../src/rules/structure-checks.js";
import { structureDrift } from "../../src/rules/catalog.js";
import { aliasOf, fieldAliases, structureFromSnapshot, type WorkflowStructure } from "../../src/model/structure.js";
import type { CompiledRule } from "../../src/rules/types.js";

const WF: WorkflowStructure = {
  workflow: { id: 7, name: "Claims", folder: null },
  source: { instance_id: 1, started_time: "2026-01-01T00:00:00Z" },
  steps: [
    {
      id: 10,
      name: "Submit",
      position: 1,
      type: "form",
      actions: [
        { id: 100, name: "Amount", type: "number" },
        { id: 101, name: "Kind", type: "radio", options: ["A", "B"] },
        { id: 102, name: "Checks", type: "checklist", options: ["x", "y"] },
        { id: 103, name: "When", type: "date" },
        { id: 104, name: "Note", type: "text" },
        { id: 105, name: "Signature", type: "signature" },
      ],
    },
    { id: 11, name: "Review", position: 2, type: "form", actions: [{ id: 110, name: "Amount", type: "number" }] },
    { id: 12, name: "Review", position: 3, type: "form", actions: [] },
  ],
};

async function rule(body: string): Promise<CompiledRule> {
  const text = `version: 1\nrules:\n  - name: r\n    workflow: 7\n${body}`;
  const r = await compileSources([{ file: "r.yaml", text }]);
  const [only] = r.ruleSet?.rules ?? [];
  if (!only) throw new Error(r.diagnostics.map((d) => d.message).join("\n"));
  return only;
}

const save = (input: string): string => `    actions:\n      - save_step: { step: Submit, inputs: [${input}] }\n`;

describe("structure checks", () => {
  it("resolves names to ids in fields, select and actions", async () => {
    const r = await rule(
      `    fields: { amount: { step: Submit, action: Amount } }\n    select: { active_step_id: submit }\n${save("{ action: Note, value: { inputValue: hi } }")}`,
    );
    expect(hasNames(r)).toBe(true);
    const c = checkRuleStructure(r, WF);
    expect(c.issues).toEqual([]);
    expect(c.rule?.fields).toEqual({ amount: { step: 10, action: 100 } });
    expect(c.rule?.select.active_step_id).toBe(10);
    expect(c.rule?.actions[0]).toMatchObject({ kind: "save_step", step: 10, inputs: [{ action: 104 }] });
    expect(c.rule && hasNames(c.rule)).toBe(false);
  });

  it("an ambiguous step name lists the ids that carry it", async () => {
    const c = checkRuleStructure(
      await rule(`    fields: { a: { step: Review, action: Amount } }\n    actions: [abort]\n`),
      WF,
    );
    expect(c.rule).toBeUndefined();
    expect(c.issues[0]?.message).toBe(
      'rule "r": fields.a.step: step name "Review" is ambiguous in workflow 7 "Claims": steps 11, 12 carry it; use the id',
    );
    expect(c.issues[0]).toMatchObject({ pos: { file: "r.yaml", line: 5, col: 26 } });
  });

  const values: Array<[string, string, RegExp | undefined]> = [
    ["number ok", "{ action: Amount, value: { inputValue: 3.5 } }", undefined],
    [
      "number given text",
      "{ action: Amount, value: { inputValue: '3' } }",
      /number field: inputValue must be a number, not "3"/,
    ],
    [
      "number given a partial template",
      "{ action: Amount, value: { inputValue: 'n{{ 1 }}' } }",
      /must be a number, not text \(a template\)/,
    ],
    ["number given a whole template", "{ action: Amount, value: { inputValue: '{{ 1 }}' } }", undefined],
    ["text given a number", "{ action: Note, value: { inputValue: 4 } }", /text field: inputValue must be text, not 4/],
    ["date ok", "{ action: When, value: { date: '2026-01-02T00:00:00Z' } }", undefined],
    ["date not a date", "{ action: When, value: { date: tomorrow } }", /date field/],
    ["date in inputValue form", "{ action: When, value: { inputValue: x } }", /date field/],
    ["radio option ok", "{ action: Kind, value: { inputValue: { radioItemSelected: B } } }", undefined],
    [
      "radio not an option",
      "{ action: Kind, value: { inputValue: { radioItemSelected: C } } }",
      /"C" is not an option of radio field 101 "Kind"; options, closest first: "A", "B"/,
    ],
    [
      "checklist ok",
      "{ action: Checks, value: { inputValue: { itemsChecked: [x], itemsNotChecked: [y] } } }",
      undefined,
    ],
    [
      "checklist item unknown",
      "{ action: Checks, value: { inputValue: { itemsChecked: [z] } } }",
      /"z" is not an item of checklist field 102 "Checks"/,
    ],
  ];
  for (const [what, input, problem] of values) {
    it(`value: ${what}`, async () => {
      const c = checkRuleStructure(await rule(save(input)), WF);
      const errors = c.issues.filter((i) => i.severity === "error");
      if (problem === undefined) expect(errors).toEqual([]);
      else {
        expect(errors).toHaveLength(1);
        expect(errors[0]?.message).toMatch(problem);
        expect(errors[0]?.where).toBe("actions[0].save_step.inputs[0].value");
      }
    });
  }

  it("a field of a type flowrules does not know takes any value, said once", async () => {
    const c = checkRuleStructure(
      await rule(save("{ action: Signature, value: { a: 1 } }, { action: 105, value: 2 }")),
      WF,
    );
    expect(c.issues.map((i) => i.severity)).toEqual(["warning"]);
    expect(c.issues[0]?.message).toMatch(/has type "signature", which flowrules does not know: any value is accepted/);
    expect(c.rule).toBeDefined();
  });

  it("ids are checked as well as names, the valid choices closest first", async () => {
    const c = checkRuleStructure(
      await rule(`    fields: { a: { step: 11, action: 101 } }\n    actions: [abort]\n`),
      WF,
    );
    expect(c.issues[0]?.message).toMatch(/field 101 belongs to step 10 "Submit", not to step 11 "Review"/);
  });
});

describe("structure helpers", () => {
  it("reads a snapshot with settings, in position order, tolerating missing keys", () => {
    const s = structureFromSnapshot({ id: 1, name: "W", folder: null }, null, {
      steps: [
        {
          id: 2,
          name: "B",
          position: 2,
          actions: [
            { id: 5, settings: { label: "Pick", type: "radio", required: true, options: [{ label: "L" }, "M"] } },
          ],
        },
        { id: 1, name: "A", position: 1 },
        "junk",
      ],
    });
    expect(s.steps.map((x) => x.id)).toEqual([1, 2]);
    expect(s.steps[1]?.actions).toEqual([{ id: 5, name: "Pick", type: "radio", required: true, options: ["L", "M"] }]);
  });

  it("derives unique identifier aliases from field names", () => {
    expect(aliasOf("Unit price")).toBe("unit_price");
    expect(aliasOf("1st reviewer")).toBe("f_1st_reviewer");
    expect(aliasOf("Café")).toBe("cafe");
    expect([...fieldAliases(WF).values()]).toContain("amount_submit");
    expect([...fieldAliases(WF).values()]).toContain("amount_review");
  });

  it("names what changed between two structures", () => {
    const now: WorkflowStructure = {
      ...WF,
      steps: WF.steps.slice(0, 2).map((s) => (s.id === 11 ? { ...s, name: "Check" } : s)),
    };
    expect(structureDrift(WF, now)).toEqual([
      'workflow 7 "Claims": step 11 renamed from "Review" to "Check"',
      'workflow 7 "Claims": step 12 "Review" removed',
    ]);
  });
});
