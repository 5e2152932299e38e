/** The engine reads and compares field values by meaning; a type error on a field says how to convert it. */
import { describe, expect, it } from "vitest";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import { instance } from "../helpers/instances.js";
import { rulesFromYaml } from "../helpers/rules.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");

const RULES = `
version: 1
rules:
  - name: approve
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 150
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "ok" }
  - name: keep-checks
    workflow: 1042
    select: { status: [running], active_step_id: 20112 }
    actions:
      - save_step:
          step: 20112
          inputs:
            - action: 50240
              value: { inputValue: { itemsChecked: ["VAT valid", "Receipt attached"], itemsNotChecked: [] } }
            - action: 50241
              value: { date: "2026-01-05T10:00:00Z" }
`;

describe("values by meaning in the planner", () => {
  it("a decimal string of unknown type in a comparison is an error that suggests $number(), naming the field", async () => {
    const rs = await rulesFromYaml(RULES);
    const rule = rs.rules[0]!;
    const plan = await planFromInstances(
      [
        {
          rule,
          workflowId: 1042,
          instances: [instance({ id: 1, values: { "20111:50222": { inputValue: "595.54" } } })],
        },
      ],
      NOW,
    );
    expect(plan.errors).toHaveLength(1);
    expect(plan.errors[0]?.message).toMatch(
      /fields\.amount is text here \("595\.54"\): compare it as a number with \$number\(fields\.amount\)/,
    );
  });

  it("a save whose values the service holds in its own notation (order of checks, +00:00 with microseconds) is not planned again", async () => {
    const rs = await rulesFromYaml(RULES);
    const rule = rs.rules[1]!;
    const held = {
      "20112:50240": { inputValue: { itemsNotChecked: [], itemsChecked: ["Receipt attached", "VAT valid"] } },
      "20112:50241": { date: "2026-01-05T10:00:00.000000+00:00" },
    };
    const changed = { ...held, "20112:50241": { date: "2026-01-05T10:00:01.000000+00:00" } };
    const plan = await planFromInstances(
      [
        {
          rule,
          workflowId: 1042,
          instances: [
            instance({ id: 1, values: held, record: { active_step_ids: [20112] } }),
            instance({ id: 2, values: changed, record: { active_step_ids: [20112] } }),
          ],
        },
      ],
      NOW,
    );
    expect(plan.errors).toEqual([]);
    expect(plan.changes.map((c) => c.instance_id)).toEqual([2]);
  });
});
