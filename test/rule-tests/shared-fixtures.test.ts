/** Shared fixtures written with `fields:` of one workflow's rules do not break the cases of another workflow's rules. */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTests } from "../../src/rule-tests/run.js";
import { tempDir } from "../helpers/temp.js";

const RULES = `version: 1
rules:
  - name: small-claims
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running] }
    when: fields.amount < 100
    actions: [ abort ]
  - name: old-onboardings
    workflow: 1043
    select: { status: [running] }
    actions: [ abort ]
`;

const TESTS = `version: 1
now: "2026-03-03T09:00:00Z"
instances:
  - { id: 1, fields: { amount: 42 } }
  - { id: 2, fields: { amount: 420 } }
tests:
  - name: claims under 100
    rule: small-claims
    expect: { matched: [1] }
  - name: onboardings, with their own fixture
    rule: old-onboardings
    instances: [ { id: 7 } ]
    expect: { matched: [7] }
`;

describe("shared fixtures across workflows", () => {
  it("a case for a rule of another workflow skips fixtures whose aliases only other rules declare", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "rules"));
    await writeFile(join(dir, "rules", "rules.yaml"), RULES);
    await writeFile(join(dir, "rules", "rules.test.yaml"), TESTS);
    const run = await runTests([join(dir, "rules")]);
    expect(run.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(run.results.map((r) => [r.name, r.status, r.failures.map((f) => f.subject)])).toEqual([
      ["claims under 100", "pass", []],
      ["onboardings, with their own fixture", "pass", []],
    ]);
  });
});
