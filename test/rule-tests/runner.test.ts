/** `flowrules test` in-process: passing and failing cases, what a failure shows, JUnit, --require-tests, located errors. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testCommand } from "../../src/commands/test.js";
import { captureIO, findAll, parseXml, tempFiles } from "./helpers.js";

const RULES = `version: 1
rules:
  - name: approve-small
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      comment: { step: 20111, action: 50230 }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 100
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "ok {{ fields.amount }}" }
    limits: { max_instances: 2 }
  - name: by-tag
    workflow: 1042
    select: { status: running }
    actions:
      - report: { group_by: tags, columns: [id, name] }
`;

const FIXTURES = `version: 1
now: "2025-01-10T12:00:00Z"
instances:
  - { id: 1, name: Small, tags: [a], active_step: 20111, fields: { amount: 40 } }
  - { id: 2, name: Big, tags: [a, b], active_step: 20111, fields: { amount: 250 } }
  - { id: 3, name: Elsewhere, active_step: 20112, fields: { amount: 5 } }
`;

async function run(tests: string, opts: { requireTests?: boolean; junit?: string; rules?: string } = {}) {
  const dir = await tempFiles({ "r.yaml": opts.rules ?? RULES, "r.test.yaml": FIXTURES + tests });
  const c = captureIO();
  const code = await testCommand(
    { paths: [dir], requireTests: opts.requireTests ?? false, ...(opts.junit ? { junit: join(dir, opts.junit) } : {}) },
    c.io,
  );
  return { code, out: c.out(), err: c.err(), dir };
}

const PASSING = `tests:
  - name: small ones are approved
    rule: approve-small
    expect:
      selected: [1, 2]
      matched: [1]
      changes:
        - { instance: 1, kind: complete_step, step: 20111, inputs: { comment: "ok 40" } }
  - name: tags are grouped
    rule: by-tag
    expect:
      reports:
        - groups: { a: [1, 2], b: 1, "(no tag)": [3] }
`;

describe("flowrules test: results", () => {
  it("passes when the plan is as expected: a table row per case and the closing line, exit 0", async () => {
    const r = await run(PASSING);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^RESULT\s+RULE\s+CASE\s+FILE/m);
    expect(r.out).toMatch(/^pass\s+approve-small\s+small ones are approved\s+\S+r\.test\.yaml:\d+:\d+$/m);
    expect(r.out).toMatch(/^pass\s+by-tag\s+tags are grouped/m);
    expect(r.out.trimEnd().split("\n").at(-1)).toBe("2 passed, 0 failed");
    expect(r.code).toBe(0);
  });

  it("a failing case names the instance and the field that differ, with expected vs actual, and exits 1", async () => {
    const r = await run(`tests:
  - name: wrong expectations
    rule: approve-small
    expect:
      matched: [1, 2]
      changes:
        - { instance: 1, kind: complete_step, step: 20111, inputs: { 50230: "ok" } }
`);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL\s+approve-small\s+wrong expectations/m);
    expect(r.out).toContain('instance 2 "Big": matched');
    expect(r.out).toMatch(/expected: matched\n\s+actual:\s+not matched/);
    expect(r.out).toContain("when fields.amount < 100 → false");
    expect(r.out).toContain("fields.amount = 250");
    expect(r.out).toContain('instance 1 "Small": complete_step step 20111 input 50230 (fields.comment)');
    expect(r.out).toMatch(/expected: "ok"\n\s+actual:\s+"ok 40"/);
    expect(r.out.trimEnd().split("\n").at(-1)).toBe("0 passed, 1 failed");
  });

  it("a change that is not planned says why; an unexpected one is reported too", async () => {
    const r = await run(`tests:
  - name: wrong instance
    rule: approve-small
    expect:
      changes:
        - { instance: 3, kind: complete_step, step: 20111 }
`);
    expect(r.code).toBe(1);
    expect(r.out).toContain('instance 3 "Elsewhere": complete_step step 20111');
    expect(r.out).toMatch(/expected: planned\n\s+actual:\s+not planned/);
    expect(r.out).toContain("select active_step_id = 20111 does not hold: active steps: 20112");
    expect(r.out).toMatch(
      /instance 1 "Small": complete_step step 20111\n\s+expected: not planned\n\s+actual:\s+planned with 50230: \{"inputValue":"ok 40"\}/,
    );
  });

  it("report groups, limits and plan errors are compared", async () => {
    const r = await run(`  - { id: 4, name: Tiny, active_step: 20111, fields: { amount: 1 } }
tests:
  - name: report counts differ
    rule: by-tag
    expect:
      reports:
        - groups: { a: 1, c: 2 }
  - name: the limit of 2 is exceeded by 2 matches plus one
    rule: approve-small
    instances:
      - { id: 5, active_step: 20111, fields: { amount: 2 } }
    expect:
      changes: []
      errors: [{ code: limit, rule: approve-small }]
  - name: an unexpected limit error fails the case
    rule: approve-small
    instances:
      - { id: 5, active_step: 20111, fields: { amount: 2 } }
    expect:
      changes: []
`);
    expect(r.out).toMatch(/^FAIL\s+by-tag\s+report counts differ/m);
    expect(r.out).toMatch(/report "by-tag" group "a"\n\s+expected: count 1\n\s+actual:\s+count 2 \(instances 1, 2\)/);
    expect(r.out).toMatch(/report "by-tag" group "c"\n\s+expected: count 2\n\s+actual:\s+\(no such group\)/);
    expect(r.out).toMatch(/report "by-tag" group "b"\n\s+expected: \(no such group\)/);
    expect(r.out).toMatch(/^pass\s+approve-small\s+the limit of 2 is exceeded/m);
    expect(r.out).toMatch(/^FAIL\s+approve-small\s+an unexpected limit error fails the case/m);
    expect(r.out).toContain("above its limit max_instances: 2");
    expect(r.out.trimEnd().split("\n").at(-1)).toBe("1 passed, 2 failed");
    expect(r.code).toBe(1);
  });
});

describe("flowrules test: several rules in one case", () => {
  it("plans them together: matched per rule, and a conflict on one step is an expected error", async () => {
    const rules = `${RULES}  - name: save-note
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 50
    actions:
      - save_step:
          step: 20111
          inputs: [{ action: 50230, value: { inputValue: "note" } }]
`;
    const r = await run(
      `tests:
  - name: both rules act on instance 1
    rule: [approve-small, save-note]
    expect:
      matched: { approve-small: [1], save-note: [1] }
      errors: [{ code: conflict, instance: 1 }]
  - name: a plain list is ambiguous with two rules
    rule: [approve-small, save-note]
    expect:
      matched: [1]
`,
      { rules },
    );
    expect(r.out).toMatch(/^pass\s+approve-small, save-note\s+both rules act on instance 1/m);
    expect(r.out).toMatch(/^ERROR\s+approve-small, save-note\s+a plain list is ambiguous/m);
    expect(r.out).toContain("matched: { <rule>: [ids] }");
    expect(r.code).toBe(1);
  });
});

describe("flowrules test: JUnit and --require-tests", () => {
  it("writes well-formed JUnit XML with the right counts", async () => {
    const r = await run(
      `tests:
  - name: passes
    rule: approve-small
    expect: { matched: [1] }
  - name: fails <with> "markup" & more
    rule: approve-small
    expect: { matched: [2] }
`,
      { junit: "out/junit.xml" },
    );
    expect(r.code).toBe(1);
    const root = parseXml(await readFile(join(r.dir, "out/junit.xml"), "utf8"));
    expect(root.name).toBe("testsuites");
    expect(root.attrs).toMatchObject({ tests: "2", failures: "1", errors: "0" });
    const suites = findAll(root, "testsuite");
    expect(suites).toHaveLength(1);
    expect(suites[0]?.attrs).toMatchObject({ tests: "2", failures: "1", errors: "0" });
    const cases = findAll(root, "testcase");
    expect(cases.map((c) => c.attrs.name)).toEqual(["passes", 'fails <with> "markup" & more']);
    expect(cases.every((c) => c.attrs.classname === "approve-small")).toBe(true);
    const failures = findAll(root, "failure");
    expect(failures).toHaveLength(1);
    expect(failures[0]?.attrs.message).toContain("instance 1: matched");
    expect(failures[0]?.text).toContain('instance 2 "Big": matched');
  });

  it("--require-tests fails for a loaded rule no case names; without it the same run passes", async () => {
    const tests = `tests:
  - name: only this rule
    rule: approve-small
    expect: { matched: [1] }
`;
    const strict = await run(tests, { requireTests: true, junit: "j.xml" });
    expect(strict.code).toBe(1);
    expect(strict.out).toMatch(/^FAIL\s+by-tag\s+\(no test\)\s+\S+r\.yaml:\d+:\d+$/m);
    expect(strict.out.trimEnd().split("\n").at(-1)).toBe("1 passed, 1 failed");
    const root = parseXml(await readFile(join(strict.dir, "j.xml"), "utf8"));
    expect(root.attrs).toMatchObject({ tests: "2", failures: "1" });
    const lenient = await run(tests);
    expect(lenient.code).toBe(0);
  });

  it("a folder without any test file fails instead of passing silently", async () => {
    const dir = await tempFiles({ "r.yaml": RULES });
    const c = captureIO();
    expect(await testCommand({ paths: [dir], requireTests: false }, c.io)).toBe(1);
    // one line, as the last of the results, naming the folder and the convention; exit 1 (docs/writing-rules.md)
    expect(c.out().trim().split("\n").at(-1)).toBe(
      `no rule tests found in ${dir} (files named *.test.yaml or *.test.yml)`,
    );
    expect(c.out()).not.toMatch(/did not load|0 passed/);
  });
});

describe("flowrules test: errors in test files are located", () => {
  it("an unknown key is reported at its line:col with a suggestion, and the file counts as failed", async () => {
    const r = await run(`tests:
  - name: typo
    rule: approve-small
    expect:
      matchd: [1]
`);
    expect(r.code).toBe(1);
    // FIXTURES has 6 lines, so `matchd` is on line 11, column 7
    expect(r.err).toMatch(
      /r\.test\.yaml:11:7 {2}error {2}unknown key "matchd" in "tests\[0\]\.expect"; did you mean "matched"\?/,
    );
    expect(r.out.trimEnd().split("\n").at(-1)).toMatch(/^0 passed, 1 failed/);
  });

  it("an unknown rule name and an unknown field alias are located errors of the case", async () => {
    const r = await run(`tests:
  - name: bad rule
    rule: aprove-small
    expect: { matched: [] }
  - name: bad alias
    rule: approve-small
    instances:
      - { id: 9, active_step: 20111, fields: { amout: 3 } }
    expect: { matched: [1] }
`);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^ERROR\s+aprove-small\s+bad rule/m);
    expect(r.out).toMatch(/r\.test\.yaml:9:11: no loaded rule is named "aprove-small"; did you mean "approve-small"\?/);
    expect(r.out).toMatch(/r\.test\.yaml:14:48: unknown field alias "amout"/);
  });

  it("a wrong date is located and explained", async () => {
    const r = await run(`tests:
  - name: bad date
    rule: approve-small
    instances:
      - { id: 9, deadline: P3D }
    expect: { matched: [1] }
`);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /r\.test\.yaml:11:28 {2}error {2}"tests\[0\]\.instances\[0\]\.deadline" is "P3D", not a date-time/,
    );
  });
});
