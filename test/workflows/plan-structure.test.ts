/**
 * plan checks rules against the live structure of their workflows (the sandbox over HTTP): names resolve to the same
 * ids, so a rule set written by name plans exactly the changes of the same set written by id; a rule that does not
 * fit is a `structure` error, with none of its changes planned, while the other rules are planned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { rulesFromYaml } from "../helpers/rules.js";
import type { Plan } from "../../src/plan/types.js";
import type { WorkflowStructure } from "../../src/model/structure.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");
let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 600, seed: 3, now: NOW });
});
afterAll(async () => {
  await sb.close();
});

async function plan(yaml: string, catalog?: WorkflowStructure[]): Promise<{ plan: Plan; warnings: string[] }> {
  const rs = await rulesFromYaml(yaml);
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  const warnings: string[] = [];
  try {
    const p = await runPlan({
      client,
      ruleSet: rs,
      now: NOW,
      onWarning: (m) => warnings.push(m),
      ...(catalog ? { catalog } : {}),
    });
    return { plan: p, warnings };
  } finally {
    await client.close();
  }
}

const BY_ID = `
version: 1
rules:
  - name: small-eur
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      currency: { step: 20111, action: 50223 }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 500 and fields.currency = "EUR"
    actions:
      - complete_step:
          step: 20111
          inputs:
            - { action: 50230, value: { inputValue: "ok" } }
            - { action: 50231, value: { date: "{{ now }}" } }
  - name: tag-purchases
    workflow: 1044
    fields: { decision: { step: 20131, action: 50263 } }
    select: { status: [running], active_step_id: 20131 }
    actions:
      - save_step: { step: 20131, inputs: [{ action: 50264, value: { inputValue: "seen" } }] }
`;

const BY_NAME = `
version: 1
rules:
  - name: small-eur
    workflow: { name: Expense claim }
    fields:
      amount: { step: Manager approval, action: Amount }
      currency: { step: Manager approval, action: Currency }
    select: { status: [running], active_step_id: Manager approval }
    when: fields.amount < 500 and fields.currency = "EUR"
    actions:
      - complete_step:
          step: Manager approval
          inputs:
            - { action: Manager comment, value: { inputValue: "ok" } }
            - { action: Approved on, value: { date: "{{ now }}" } }
  - name: tag-purchases
    workflow: 1044
    fields: { decision: { step: Budget approval, action: Decision } }
    select: { status: [running], active_step_id: Budget approval }
    actions:
      - save_step: { step: Budget approval, inputs: [{ action: Comment, value: { inputValue: "seen" } }] }
`;

function comparable(p: Plan): unknown {
  return { changes: p.changes, errors: p.errors, rules: p.rules.map((r) => ({ ...r, workflow_name: undefined })) };
}

describe("names and ids", () => {
  it("a rule set written with names plans exactly the changes of the same rules written with ids", async () => {
    const ids = await plan(BY_ID);
    const names = await plan(BY_NAME);
    expect(ids.plan.errors).toEqual([]);
    expect(ids.plan.changes.length).toBeGreaterThan(0);
    expect(new Set(ids.plan.changes.map((c) => c.kind))).toEqual(new Set(["complete_step", "save_step"]));
    expect(comparable(names.plan)).toEqual(comparable(ids.plan));
    // requests carry ids
    expect(names.plan.changes.every((c) => c.step_id === 20111 || c.step_id === 20131)).toBe(true);
  });

  it("an unknown or ambiguous name is a structure error listing candidates; the other rule is still planned", async () => {
    const { plan: p } = await plan(BY_NAME.replace("action: Amount }", "action: Amout }"));
    expect(p.errors).toHaveLength(1);
    const [e] = p.errors;
    expect(e).toMatchObject({ code: "structure", rule: "small-eur" });
    expect(e?.message).toMatch(/fields\.amount\.action: field "Amout" is not a field of step 20111 "Manager approval"/);
    expect(e?.message).toMatch(/closest first: 50222 "Amount"/);
    expect(e?.message).toMatch(/rules\.yaml:\d+:\d+\)$/);
    expect(p.changes.some((c) => c.rule === "small-eur")).toBe(false);
    expect(p.changes.some((c) => c.rule === "tag-purchases")).toBe(true);
    expect(p.rules.find((r) => r.name === "small-eur")?.status).toBe("failed");
  });
});

const ONE = (actions: string, extra = ""): string => `
version: 1
rules:
  - name: bad
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }${extra}
    actions:
${actions}
  - name: fine
    workflow: 1043
    select: { status: [running] }
    actions: [ { report: { group_by: status } } ]
`;

describe("a rule that does not fit its workflow is refused before any selection or mutation", () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "an input with a form-field id the step does not have",
      "      - complete_step: { step: 20111, inputs: [{ action: 99999, value: { inputValue: x } }] }",
      /field 99999 is not a field of step 20111 "Manager approval"/,
    ],
    [
      "save_step on a step of another workflow",
      "      - save_step: { step: 20131, inputs: [{ action: 50264, value: { inputValue: x } }] }",
      /step 20131 is not a step of workflow 1042 "Expense claim"; valid steps, closest first: 20111/,
    ],
    [
      "a radio value that is not an option",
      "      - save_step: { step: 20111, inputs: [{ action: 50223, value: { inputValue: { radioItemSelected: YEN } } }] }",
      /"YEN" is not an option of radio field 50223 "Currency"; options, closest first: /,
    ],
    [
      "text sent to a number field",
      "      - save_step: { step: 20111, inputs: [{ action: 50222, value: { inputValue: lots } }] }",
      /field 50222 "Amount" is a number field: inputValue must be a number, not "lots"/,
    ],
    [
      "a checklist item that is not among the options",
      "      - save_step: { step: 20112, inputs: [{ action: 50240, value: { inputValue: { itemsChecked: [Receipt] } } }] }",
      /"Receipt" is not an item of checklist field 50240 "Checks"; items, closest first: "Receipt attached"/,
    ],
    [
      "a date field given text",
      "      - save_step: { step: 20111, inputs: [{ action: 50231, value: { date: soon } }] }",
      /is a date field/,
    ],
    [
      "a field named with the wrong step",
      "      - save_step: { step: 20110, inputs: [{ action: Amount, value: { inputValue: 3 } }] }",
      /field "Amount" belongs to step 20111 "Manager approval", not to step 20110 "Submit claim"/,
    ],
  ];
  for (const [what, actions, message] of cases) {
    it(what, async () => {
      sb.clearRequests();
      const { plan: p } = await plan(ONE(actions));
      expect(p.errors.map((e) => e.code)).toEqual(["structure"]);
      expect(p.errors[0]?.message).toMatch(message);
      // no URL, no list of ids in the message
      expect(p.errors[0]?.message).not.toMatch(/https?:|instance_ids|\/processes\//);
      expect(p.changes.filter((c) => c.rule === "bad")).toEqual([]);
      expect(p.reports.map((r) => r.rule)).toEqual(["fine"]);
      // the bad rule's workflow was read (two requests) but its instances were never listed
      const lists = sb.requests().filter((r) => r.path === "/api/v2/processes/1042/instances/");
      expect(lists.map((r) => r.query.page_size)).toEqual(["1"]);
      expect(sb.requests().filter((r) => r.method !== "GET")).toEqual([]);
    });
  }

  it("a template whose type is unknown until evaluation is accepted", async () => {
    const { plan: p } = await plan(
      ONE("      - save_step: { step: 20111, inputs: [{ action: 50222, value: { inputValue: '{{ 3 }}' } }] }"),
    );
    expect(p.errors).toEqual([]);
  });

  it("select.active_step_id by a name that is not a step is refused", async () => {
    const { plan: p } = await plan(ONE("      - abort", "\n    fields: { a: { step: Nope, action: 1 } }"));
    expect(p.errors[0]).toMatchObject({ code: "structure", rule: "bad" });
    expect(p.errors[0]?.message).toMatch(/fields\.a\.step: no step named "Nope" in workflow 1042/);
  });
});

describe("drift from the committed catalog", () => {
  it("warns and names what changed", async () => {
    const live = (await plan(BY_ID)).plan;
    expect(live.errors).toEqual([]);
    const committed: WorkflowStructure = {
      workflow: { id: 1042, name: "Expense claim", folder: null },
      source: null,
      steps: [
        {
          id: 20110,
          name: "Submit",
          position: 1,
          type: "form",
          actions: [{ id: 50220, name: "Description", type: "text" }],
        },
        {
          id: 20111,
          name: "Manager approval",
          position: 2,
          type: "form",
          actions: [
            { id: 50222, name: "Amount", type: "number" },
            { id: 59999, name: "Gone", type: "text" },
          ],
        },
        { id: 20199, name: "Old step", position: 9, type: "form", actions: [] },
      ],
    };
    const { warnings } = await plan(BY_ID, [committed]);
    const text = warnings.join("\n");
    expect(text).toMatch(/step 20110 renamed from "Submit" to "Submit claim"/);
    expect(text).toMatch(/field 50221 "Category" added to step 20110/);
    expect(text).toMatch(/field 59999 "Gone" removed from step 20111/);
    expect(text).toMatch(/step 20199 "Old step" removed/);
    expect(text).toMatch(/step 20112 "Finance review" added/);
    // one warning for the workflow, however many rules use it
    expect(warnings.filter((w) => w.includes("differs")).length).toBe(1);
  });
});
