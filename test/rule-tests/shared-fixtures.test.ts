/**
 * Shared fixtures written with `fields:` of one workflow's rules do not break the cases of another workflow's rules,
 * and `fields_by_workflow` gives one fixture values per workflow (docs/writing-rules.md, Testing rules).
 */
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

const BY_WORKFLOW_RULES = `version: 1
rules:
  - name: small-claims
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running] }
    when: fields.amount < 100
    actions: [ abort ]
  - name: big-requests
    workflow: { name: Purchase request }
    fields: { total: { step: 30111, action: 60222 } }
    select: { status: [running] }
    when: fields.total > 400
    actions: [ abort ]
  - name: stuck-in-both
    workflow: [ 1042, { name: Purchase request } ]
    select: { status: [running] }
    actions: [ abort ]
  - name: stuck-everywhere
    workflow: "*"
    select: { status: [running] }
    actions: [ abort ]
`;

const BY_WORKFLOW_TESTS = `version: 1
now: "2026-03-03T09:00:00Z"
workflows: { Purchase request: 1050 }
instances:
  - { id: 10, fields_by_workflow: { 1042: { amount: 80 }, "Purchase request": { total: 500 } } }
  - { id: 11, fields_by_workflow: { "Purchase request": { total: 50 } } }
  - { id: 12, fields_by_workflow: { 1042: { amount: 300 } } }
  - { id: 13, workflow: 1043 }
tests:
  - name: claims take the 1042 values
    rule: small-claims
    expect: { selected: [10, 12], matched: [10] }
  - name: requests take the Purchase request values
    rule: big-requests
    expect: { selected: [10, 11], matched: [10] }
  - name: a rule over both sees each fixture once
    rule: stuck-in-both
    expect:
      matched: [10, 11, 12]
      changes: [ { instance: 10, kind: abort }, { instance: 11, kind: abort }, { instance: 12, kind: abort } ]
  - name: a rule over every workflow sees them all
    rule: stuck-everywhere
    expect: { matched: [10, 11, 12, 13] }
  - name: both rules together
    rule: [small-claims, big-requests]
    expect: { matched: { small-claims: [10], big-requests: [10] } }
`;

describe("fields_by_workflow", () => {
  it("one shared fixture gives values to the rules of each workflow and to rules over several", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "rules"));
    await writeFile(join(dir, "rules", "rules.yaml"), BY_WORKFLOW_RULES);
    await writeFile(join(dir, "rules", "rules.test.yaml"), BY_WORKFLOW_TESTS);
    const run = await runTests([join(dir, "rules")]);
    expect(run.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(run.results.map((r) => [r.name, r.status, r.failures.map((f) => f.subject)])).toEqual([
      ["claims take the 1042 values", "pass", []],
      ["requests take the Purchase request values", "pass", []],
      ["a rule over both sees each fixture once", "pass", []],
      ["a rule over every workflow sees them all", "pass", []],
      ["both rules together", "pass", []],
    ]);
  });

  it("the values of the case's workflow win over fields, and a wrong expectation fails", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "rules"));
    await writeFile(join(dir, "rules", "rules.yaml"), BY_WORKFLOW_RULES);
    const tests = `version: 1
now: "2026-03-03T09:00:00Z"
workflows: { Purchase request: 1050 }
instances:
  - { id: 20, fields: { amount: 500 }, fields_by_workflow: { 1042: { amount: 20 } } }
tests:
  - name: per-workflow value wins
    rule: small-claims
    expect: { matched: [20] }
  - name: claims 12 would match with the other workflow's value
    rule: small-claims
    instances: [ { id: 21, fields_by_workflow: { 1042: { amount: 300 }, 1050: { total: 5 } } } ]
    expect: { matched: [20, 21] }
`;
    await writeFile(join(dir, "rules", "rules.test.yaml"), tests);
    const run = await runTests([join(dir, "rules")]);
    expect(run.results.map((r) => [r.name, r.status])).toEqual([
      ["per-workflow value wins", "pass"],
      ["claims 12 would match with the other workflow's value", "fail"],
    ]);
  });

  it("an alias the workflow's rules do not declare is located at its key", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "rules"));
    await writeFile(join(dir, "rules", "rules.yaml"), BY_WORKFLOW_RULES);
    const tests = `version: 1
now: "2026-03-03T09:00:00Z"
tests:
  - name: misspelt alias
    rule: small-claims
    instances:
      - { id: 30, fields_by_workflow: { 1042: { amout: 20 } } }
    expect: { matched: [30] }
`;
    await writeFile(join(dir, "rules", "rules.test.yaml"), tests);
    const run = await runTests([join(dir, "rules")]);
    const [only] = run.results;
    expect(only?.status).toBe("error");
    expect(only?.failures.map((f) => [f.subject, f.at?.line, f.at?.col])).toEqual([
      [expect.stringContaining('unknown field alias "amout"'), 7, 49],
    ]);
  });

  it("a workflow key that names no workflow is located, with the closest name", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "rules"));
    await writeFile(join(dir, "rules", "rules.yaml"), BY_WORKFLOW_RULES);
    const tests = `version: 1
now: "2026-03-03T09:00:00Z"
workflows: { Purchase request: 1050 }
tests:
  - name: misspelt workflow
    rule: big-requests
    instances:
      - { id: 40, fields_by_workflow: { Purchase requst: { total: 900 } } }
    expect: { matched: [40] }
`;
    await writeFile(join(dir, "rules", "rules.test.yaml"), tests);
    const run = await runTests([join(dir, "rules")]);
    const [only] = run.results;
    expect(only?.status).toBe("error");
    expect(only?.failures.map((f) => [f.subject, f.at?.line, f.at?.col])).toEqual([
      [expect.stringMatching(/unknown workflow "Purchase requst" in fields_by_workflow.*Purchase request/), 8, 41],
    ]);
  });
});
