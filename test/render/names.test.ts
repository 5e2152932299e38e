/**
 * Names beside ids (docs/design.md, "Names in a plan") and skipped matches by reason, with the pure planner: what the
 * `names` table holds (only what the plan shows, the first source that knows a name, never a stand-in), how every
 * view shows it (`complete step 20111 "Manager approval"`, `Manager comment (50230): … → …`, a field behind an alias
 * included), and that a plan without names reads exactly as plans always did.
 */
import { describe, expect, it } from "vitest";
import { namesOfSnapshot, namesTable, type NameSource } from "../../src/engine/names.js";
import { maskKeyInPlan } from "../../src/engine/mask-plan.js";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import type { Plan } from "../../src/plan/types.js";
import { appliedLines, changeLine } from "../../src/render/apply/changes.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import { planNames } from "../../src/render/plan/names.js";
import { instance } from "../helpers/instances.js";
import { rulesFromYaml } from "../helpers/rules.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");

const RULES = `
version: 1
rules:
  - name: approve-small
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      comment: { step: 20111, action: 50230 }
    when: fields.amount < 100
    actions:
      - complete_step:
          step: 20111
          inputs: [ { action: 50230, value: { inputValue: "Approved {{ fields.amount }}" } } ]
  - name: note
    workflow: 1042
    actions:
      - save_step: { step: 20112, inputs: [ { action: 50240, value: { inputValue: "seen" } } ] }
  - name: stop-stale
    workflow: 1043
    actions: [abort]
`;

const source = (
  name: string | undefined,
  steps: Record<number, string>,
  fields: Record<number, string>,
): NameSource => ({
  ...(name !== undefined ? { name } : {}),
  steps: new Map(Object.entries(steps).map(([k, v]) => [Number(k), v])),
  fields: new Map(Object.entries(fields).map(([k, v]) => [Number(k), v])),
});

/** Two sources for 1042 (the first wins per id), one nameless and one named source for 1043. */
const SOURCES = new Map<number, NameSource[]>([
  [
    1042,
    [
      source(
        "Expense claim",
        { 20111: "Manager approval", 20199: "Never shown" },
        { 50222: "Amount", 50230: "Manager comment", 59999: "Never shown" },
      ),
      source("An older name", { 20111: "Old step name", 20112: "Review" }, { 50240: "Note", 50230: "Old field name" }),
    ],
  ],
  [1043, [source(undefined, {}, {}), source("Employee onboarding", {}, {})]],
]);

async function plan(names?: ReadonlyMap<number, readonly NameSource[]>): Promise<Plan> {
  const rs = await rulesFromYaml(RULES);
  const claims = [
    instance({
      id: 101,
      values: { "20111:50222": { inputValue: 40 }, "20111:50230": { inputValue: "" } },
      record: { active_step_ids: [20111, 20112] },
    }),
    instance({
      id: 102,
      values: { "20111:50222": { inputValue: 60 }, "20112:50240": { inputValue: "seen" } },
      record: { active_step_ids: [20112] },
    }),
    instance({ id: 103, status: "completed", values: { "20111:50222": { inputValue: 50 } } }),
  ];
  return planFromInstances(
    [
      { rule: rs.rules[0]!, workflowId: 1042, instances: claims },
      { rule: rs.rules[1]!, workflowId: 1042, instances: claims },
      { rule: rs.rules[2]!, workflowId: 1043, instances: [instance({ id: 201, process_id: 1043 })] },
    ],
    NOW,
    { baseUrl: "http://127.0.0.1:4010/api", rulesDigest: "sha256:fixture", ...(names ? { names } : {}) },
  );
}

describe("the names table", () => {
  it("holds only the workflows, steps and fields the plan shows, each from the first source that knows it", async () => {
    const p = await plan(SOURCES);
    expect(p.names).toEqual([
      // 20199, 59999 and the amount read by `when` are not shown by any change; 50230 keeps the first source's name
      {
        workflow_id: 1042,
        name: "Expense claim",
        steps: { "20111": "Manager approval", "20112": "Review" },
        fields: { "50230": "Manager comment", "50240": "Note" },
      },
      { workflow_id: 1043, name: "Employee onboarding" },
    ]);
    // the alias a change shows, with the ids it stands for; a rule's own entry is otherwise what it was
    expect(p.rules[0]?.fields).toEqual({ comment: { step: 20111, action: 50230 } });
    expect(p.rules[0]).not.toHaveProperty("workflow_name");
    // pure: the same sources give the same plan
    expect(await plan(SOURCES)).toEqual(p);
  });

  it("counts skipped matches by the reason their action kind gave, per rule and in the summary", async () => {
    const p = await plan(SOURCES);
    expect(p.rules[0]?.skipped_by_reason).toEqual({ "the step is not active": 1, "the instance is completed": 1 });
    expect(p.rules[1]?.skipped_by_reason).toEqual({
      "the step already holds these values": 1,
      "the instance is completed": 1,
    });
    expect(p.rules[2]).not.toHaveProperty("skipped_by_reason");
    expect(p.summary.skipped).toBe(4);
    expect(p.rules.map((r) => r.skipped)).toEqual([2, 2, 0]);
  });

  it("never takes a snapshot's stand-ins (a step or field without a name) for a name", () => {
    const s = namesOfSnapshot(1042, {
      name: "",
      steps: [
        { id: 20111, actions: [{ id: 50230, type: "text" }] },
        { id: 20112, name: "Review", actions: [{ id: 50240, name: "Note" }] },
      ],
    });
    expect(s.name).toBeUndefined();
    expect([...s.steps]).toEqual([[20112, "Review"]]);
    expect([...s.fields]).toEqual([[50240, "Note"]]);
    expect(namesTable([{ name: "r", workflowId: 1042, fields: {} }], [], new Map([[1042, [s]]]))).toEqual([]);
  });

  it("is the service's data: an API key in a name is masked like one in an instance name", async () => {
    const key = "k-7f3a9c2e7f3a9c2e";
    const p = await plan(new Map([[1042, [source(`Claims ${key}`, { 20111: `Step ${key}` }, {})]]]));
    expect(maskKeyInPlan(p, key)).toBe(2);
    expect(JSON.stringify(p)).not.toContain(key);
    expect(p.names?.[0]).toMatchObject({ name: "Claims [redacted]", steps: { "20111": "Step [redacted]" } });
  });
});

describe("names in every view", () => {
  it("text: the workflow, the step and the field beside their ids, an alias's field too, and why matches were skipped", async () => {
    const out = PLAN_FORMATS.text(await plan(SOURCES), { color: false });
    expect(out).toContain(
      "Rule approve-small (workflow 1042 Expense claim): 3 selected, 3 matched, 1 change, 2 skipped\n  1 skipped: the step is not active\n  1 skipped: the instance is completed\n",
    );
    expect(out).toContain(
      '✓ #101 "Instance 101": complete step 20111 "Manager approval"\n      step 20111 "Manager approval": "active" → "completed"\n      Manager comment (50230): "" → "Approved 40"\n',
    );
    expect(out).toContain('~ #101 "Instance 101": save step 20112 "Review"\n      Note (50240): set to "seen"');
    expect(out).toContain("Rule stop-stale (workflow 1043 Employee onboarding)");
  });

  it("Markdown and HTML name them too, and list the skip reasons", async () => {
    const p = await plan(SOURCES);
    const md = PLAN_FORMATS.markdown(p, { color: false });
    expect(md).toContain("| `approve-small` | 1042 Expense claim | 3 | 3 | 1 | ok |");
    expect(md).toContain("- `approve-small`: 1 skipped: the step is not active");
    expect(md).toContain(
      '@@ ✓ #101 Instance 101: complete step 20111 "Manager approval" @@\n- step 20111 "Manager approval": "active"\n+ step 20111 "Manager approval": "completed"\n- Manager comment (50230): ""\n+ Manager comment (50230): "Approved 40"',
    );
    const html = PLAN_FORMATS.html(p, { color: false });
    expect(html).toContain("<td>1042 Expense claim</td>");
    expect(html).toContain(`<span>step 20111 "Manager approval"</span>`);
    expect(html).toContain("Manager comment (50230) <del>");
    expect(html).toContain("<li><code>note</code>: 1 skipped: the step already holds these values</li>");
  });

  it("a plan without names reads as plans always did: ids alone", async () => {
    const named = await plan(SOURCES);
    const bare = await plan();
    expect(bare.names).toBeUndefined();
    const out = PLAN_FORMATS.text(bare, { color: false });
    expect(out).toContain(
      'complete step 20111\n      step 20111: "active" → "completed"\n      fields.comment: "" → "Approved 40"',
    );
    expect(out).toContain("(workflow 1042): 3 selected");
    // the names are all that differ
    const strip = (p: Plan): Plan =>
      ({ ...p, names: undefined, rules: p.rules.map(({ fields: _f, ...r }) => r) }) as Plan;
    expect(PLAN_FORMATS.text(strip(named), { color: false })).toBe(out);
  });

  it("the applied-change line (apply, auto-approve, watch cycles): kind, instance, step by name, rule", async () => {
    const p = await plan(SOURCES);
    const names = planNames(p);
    const [complete, save, abort] = [
      p.changes.find((c) => c.kind === "complete_step"),
      p.changes.find((c) => c.kind === "save_step"),
      p.changes.find((c) => c.kind === "abort"),
    ];
    if (!complete || !save || !abort) throw new Error("fixture plans one change of each kind");
    expect(changeLine(complete, names)).toBe('✓ #101 complete step 20111 "Manager approval" (rule approve-small)');
    expect(changeLine(save, names)).toBe('~ #101 save step 20112 "Review" (rule note)');
    expect(changeLine(abort, names)).toBe("✗ #201 abort (rule stop-stale)");
    expect(changeLine(complete)).toBe("✓ #101 complete step 20111 (rule approve-small)");
    // a hostile name is shown, not obeyed
    const evil = planNames({ ...p, names: [{ workflow_id: 1042, steps: { "20111": "x\u001b[2K\u202e" } }] });
    expect(changeLine(complete, evil)).toBe('✓ #101 complete step 20111 "x\\u001b[2K\\u202e" (rule approve-small)');
    const outcomes = p.changes.map((change) => ({ change, status: "applied" as const }));
    expect(appliedLines(outcomes, names, { max: 2, where: "the journal j.jsonl" })).toEqual([
      "Applied (3):",
      `  ${changeLine(complete, names)}`,
      `  ${changeLine(save, names)}`,
      "  … 1 more change: the journal j.jsonl lists every one",
    ]);
  });
});
