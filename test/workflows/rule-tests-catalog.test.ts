/** `flowrules test` with the workflow catalog: rules naming steps and fields run against fixtures written with ids. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTests } from "../../src/rule-tests/run.js";
import type { Catalog } from "../../src/rules/catalog.js";
import { tempDir } from "../helpers/temp.js";

const CATALOG: Catalog = {
  format_version: 1,
  pulled_at: "2026-01-01T00:00:00Z",
  base_url: "http://127.0.0.1:1/api",
  workflows: [
    {
      workflow: { id: 1042, name: "Expense claim", folder: null },
      source: null,
      steps: [
        {
          id: 20111,
          name: "Manager approval",
          position: 2,
          type: "form",
          actions: [
            { id: 50222, name: "Amount", type: "number" },
            { id: 50230, name: "Manager comment", type: "text" },
            { id: 50231, name: "Submitted", type: "date" },
          ],
        },
      ],
    },
  ],
};

const RULES = `version: 1
rules:
  - name: approve
    workflow: 1042
    fields: { amount: { step: Manager approval, action: Amount } }
    select: { status: [running], active_step_id: Manager approval }
    when: fields.amount < 100
    actions:
      - complete_step: { step: Manager approval, inputs: [{ action: Manager comment, value: { inputValue: ok } }] }
`;

const TESTS = `version: 1
now: "2026-01-01T00:00:00Z"
tests:
  - name: small claims waiting on the manager are approved
    rule: approve
    instances:
      - { id: 1, name: small, active_step: 20111, fields: { amount: 5 } }
      - { id: 2, name: large, active_step: 20111, fields: { amount: 500 } }
      - { id: 3, name: elsewhere, active_step: 20112, fields: { amount: 5 } }
    expect:
      selected: [1, 2]
      matched: [1]
      changes:
        - { instance: 1, kind: complete_step, step: 20111, inputs: { 50230: ok } }
`;

describe("rule tests with the workflow catalog", () => {
  it("names resolve to the fixtures' ids with the catalog; without it the step never matches", async () => {
    const dir = await tempDir("flowrules-rt-");
    await writeFile(join(dir, "approve.yaml"), RULES);
    await writeFile(join(dir, "approve.test.yaml"), TESTS);
    const withCatalog = await runTests([dir], { catalog: CATALOG });
    expect(withCatalog.diagnostics).toEqual([]);
    expect(withCatalog.results.map((r) => r.status)).toEqual(["pass"]);
    const without = await runTests([dir]);
    expect(without.results.map((r) => r.status)).toEqual(["fail"]);
  });

  it("takes the fields' types from the catalog: a plain relative date in a fixture is a date", async () => {
    const dir = await tempDir("flowrules-rt-");
    await writeFile(
      join(dir, "stale.yaml"),
      `version: 1
rules:
  - name: stale
    workflow: 1042
    fields: { submitted: { step: Manager approval, action: Submitted } }
    when: $daysSince(fields.submitted) > 1
    actions: [ abort ]
`,
    );
    await writeFile(
      join(dir, "stale.test.yaml"),
      `version: 1
now: "2026-01-10T00:00:00Z"
tests:
  - name: submitted two days ago is stale
    rule: stale
    instances:
      - { id: 1, name: old, fields: { submitted: -P2D } }
      - { id: 2, name: new, fields: { submitted: -PT3H } }
    expect:
      matched: [1]
`,
    );
    const withCatalog = await runTests([dir], { catalog: CATALOG });
    expect(withCatalog.diagnostics).toEqual([]);
    expect(withCatalog.results.map((r) => r.status)).toEqual(["pass"]);
    // the file's own field_types win: as text, "-P2D" is no date, $daysSince finds none and nothing matches
    const text = await readFile(join(dir, "stale.test.yaml"), "utf8");
    await writeFile(join(dir, "stale.test.yaml"), text.replace("now:", "field_types: { submitted: text }\nnow:"));
    const overridden = await runTests([dir], { catalog: CATALOG });
    expect(overridden.diagnostics).toEqual([]);
    expect(overridden.results.map((r) => r.status)).toEqual(["fail"]);
  });
});
