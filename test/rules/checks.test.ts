/** Whole-set checks: warnings for actions a rule's select rules out and for rules that may contest an instance. */
import { describe, expect, it } from "vitest";
import { compileSources } from "../../src/rules/index.js";
import { errorsOf, loadText, warningsOf } from "./helpers.js";

const complete = (step: number) => `actions:\n      - complete_step: { step: ${step} }`;

function file(rules: string[]): string {
  return `version: 1\nrules:\n${rules.join("\n")}\n`;
}

function rule(name: string, workflow: string, rest: string): string {
  return `  - name: ${name}\n    workflow: ${workflow}\n    ${rest}`;
}

describe("set checks", () => {
  it("warns when select.status leaves no running instance for a step action", () => {
    const r = loadText(file([rule("done", "1042", `select: { status: [completed, aborted] }\n    ${complete(20111)}`)]));
    expect(errorsOf(r)).toEqual([]);
    expect(r.ruleSet).toBeDefined();
    const w = warningsOf(r);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ code: "select-excludes", rule: "done", line: 7, col: 9 });
    expect(w[0]!.message).toMatch(/completes step 20111, but its select\.status \(completed, aborted\)/);
  });

  it("warns for an abort of instances select keeps from running", () => {
    const r = loadText(file([rule("gone", "1042", "select: { status: aborted }\n    actions: [abort]")]));
    expect(warningsOf(r).map((d) => d.message)).toEqual([expect.stringMatching(/aborts instances, but its select\.status \(aborted\)/)]);
  });

  it("warns when select.active_step_id is another step", () => {
    const r = loadText(file([rule("other", "1042", `select: { active_step_id: 20110 }\n    ${complete(20111)}`)]));
    expect(warningsOf(r).map((d) => d.message)).toEqual([expect.stringMatching(/completes step 20111, but its select\.active_step_id is 20110/)]);
  });

  it("warns when select.process names another workflow", () => {
    const r = loadText(file([rule("proc", "1042", "select: { process: 1043 }\n    actions: [abort]")]));
    expect(warningsOf(r).map((d) => d.message)).toEqual([expect.stringMatching(/select\.process is 1043: no instance can match/)]);
    expect(loadText(file([rule("same", "1042", "select: { process: 1042 }\n    actions: [abort]")])).diagnostics).toEqual([]);
  });

  it("no warning when select allows the action", () => {
    const r = loadText(file([rule("ok", "1042", `select: { status: [running], active_step_id: "20111" }\n    ${complete(20111)}`)]));
    expect(r.diagnostics).toEqual([]);
  });

  it("warns when two rules of one workflow act on the same step, naming both", () => {
    const r = compileSources([
      { file: "a.yaml", text: file([rule("first", "1042", complete(20111))]) },
      { file: "b.yaml", text: file([rule("second", "1042", "actions:\n      - save_step: { step: 20111 }"), rule("elsewhere", "1043", complete(20111))]) },
    ]);
    const w = warningsOf(r);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ file: "b.yaml", code: "conflict", rule: "second" });
    expect(w[0]!.message).toMatch(/rules "first" \(a\.yaml:6:9\) and "second" may conflict on workflow 1042: both act on step 20111/);
  });

  it("warns when one rule aborts where another acts, also for workflows given by name", () => {
    const wf = "{ name: Expense claim }";
    const r = loadText(file([rule("stop", wf, "actions: [abort]"), rule("go", wf, complete(20111))]));
    expect(warningsOf(r).map((d) => d.message)).toEqual([expect.stringMatching(/"stop" .* and "go" may conflict on workflow "Expense claim": one aborts instances in which the other completes step 20111/)]);
  });

  it("a rule over several workflows meets the rules of each of them, not only of its first", () => {
    const r = loadText(
      file([
        rule("both", "[1042, 1043]", "actions:\n      - complete_step: { step: Manager approval }"),
        rule("second-only", "1043", "actions:\n      - save_step: { step: Manager approval }"),
        rule("elsewhere", "1044", "actions:\n      - save_step: { step: Manager approval }"),
        rule("also-both", "[1043, 1042]", "actions:\n      - save_step: { step: Manager approval }"),
      ]),
    );
    expect(warningsOf(r).map((d) => [d.rule, d.message])).toEqual([
      [
        "second-only",
        expect.stringMatching(/^rules "both" \(mem\.yaml:\d+:\d+\) and "second-only" may conflict on workflow 1043: both act on step "Manager approval"; /),
      ],
      // met in two workflows, counted once: the two earlier actions, not three
      [
        "also-both",
        expect.stringMatching(/^rules "both" .* and "also-both" may conflict on workflow 1043: both act on step "Manager approval" \(and 1 more earlier action\); /),
      ],
    ]);
  });

  it('a rule over "*" meets every rule acting on a step of that name, whatever its workflow', () => {
    const r = loadText(
      file([
        rule("one", "1042", "actions:\n      - complete_step: { step: Manager approval }"),
        rule("other", "{ name: Purchase }", "actions:\n      - save_step: { step: Manager approval }"),
        rule("all", '"*"', "actions:\n      - save_step: { step: Manager approval }"),
        rule("later", "1044", "actions:\n      - complete_step: { step: Manager approval }"),
        rule("not-that-step", "1044", "actions:\n      - complete_step: { step: Review }"),
      ]),
    );
    expect(warningsOf(r).map((d) => [d.rule, d.message])).toEqual([
      ["all", expect.stringMatching(/^rules "one" .* and "all" may conflict on workflow 1042: both act on step "Manager approval" \(and 1 more earlier action\); /)],
      ["later", expect.stringMatching(/^rules "all" .* and "later" may conflict on workflow 1044: both act on step "Manager approval"; /)],
    ]);
    // an abort over "*" meets every step action of every workflow
    const abort = loadText(file([rule("step", "1042", complete(20111)), rule("stop", '"*"', "actions: [abort]")]));
    expect(warningsOf(abort).map((d) => d.message)).toEqual([
      expect.stringMatching(/"step" .* and "stop" may conflict on workflow 1042: one aborts instances in which the other completes step 20111/),
    ]);
  });

  it("rules whose select.status share no value cannot meet", () => {
    const r = loadText(file([rule("a", "1042", `select: { status: completed }\n    ${complete(5)}`), rule("b", "1042", `select: { status: [running] }\n    ${complete(5)}`)]));
    expect(warningsOf(r).map((d) => d.code)).toEqual(["select-excludes"]);
  });

  it("reports never conflict", () => {
    const r = loadText(file([rule("r1", "1042", "actions:\n      - report: { group_by: tags }"), rule("r2", "1042", "actions: [abort]")]));
    expect(r.diagnostics).toEqual([]);
  });

  it("warns for two actions of one rule on the same step", () => {
    const r = loadText(file([rule("twice", "1042", "actions:\n      - save_step: { step: 1 }\n      - complete_step: { step: 1 }")]));
    expect(warningsOf(r).map((d) => d.message)).toEqual([expect.stringMatching(/two actions of rule "twice" may conflict: both act on step 1/)]);
  });
});
