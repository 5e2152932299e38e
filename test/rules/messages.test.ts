/** One clear message per mistake, in memory: shapes the broken-file corpus does not cover. */
import { describe, expect, it } from "vitest";
import { ACTION_KINDS } from "../../src/actions/index.js";
import { errorsOf, loadText, ruleFile, warningsOf } from "./helpers.js";

function only(text: string): { line: number; col: number; message: string; code: string } {
  const errors = errorsOf(loadText(text));
  expect(errors, JSON.stringify(errors)).toHaveLength(1);
  const { line, col, message, code } = errors[0]!;
  return { line, col, message, code };
}

const rule = (body: string) => ruleFile(`workflow: 1042\n${body}`);

describe("schema messages", () => {
  it("empty file", () => {
    expect(only("")).toMatchObject({ line: 1, col: 1, message: 'the file is empty: a rule file holds "version: 1" and "rules:"' });
  });

  it("a file that is a list", () => {
    expect(only("- a\n- b\n").message).toBe('a rule file must be a mapping with "version: 1" and "rules:", not a list');
  });

  it("missing version", () => {
    expect(only("rules: []\n").message).toBe('missing required key "version" at the top of the file');
  });

  it("unknown top-level key with suggestion", () => {
    expect(only("version: 1\nrule: []\nrules: []\n")).toMatchObject({ line: 2, col: 1, message: 'unknown key "rule" at the top of the file; did you mean "rules"?' });
  });

  it("unknown key without a close match lists the valid keys", () => {
    expect(only(rule("actions: [abort]\nzzzzzz: 1")).message).toMatch(/^unknown key "zzzzzz" in rule "r"; expected one of: name, description, workflow/);
  });

  it("status of the wrong type names both accepted forms", () => {
    const m = only(rule("select: { status: 5 }\nactions: [abort]")).message;
    expect(m).toMatch(/^"select\.status" in rule "r" must be a string or a list, not an integer/);
  });

  it("a single status string is checked against the enum", () => {
    expect(only(rule("select: { status: runnin }\nactions: [abort]")).message).toMatch(/is "runnin", not one of: running, completed, aborted; did you mean "running"\?/);
  });

  it("workflow as a string", () => {
    expect(only(ruleFile("workflow: Expense claim\nactions: [abort]")).message).toBe('"workflow" in rule "r" must be an id, { name: "Expense claim" }, a list of them, or "*" (every workflow), not the string "Expense claim"');
  });

  it("an empty value", () => {
    expect(only(rule("when:\nactions: [abort]"))).toMatchObject({ line: 5, message: '"when" in rule "r" has no value; expected a string' });
  });

  it("unknown select key suggests the query parameter", () => {
    expect(only(rule("select: { started_after: now }\nactions: [abort]")).message).toBe('unknown key "started_after" in select of rule "r"; did you mean "started_time_after"?');
  });

  it("cursor in select", () => {
    expect(only(rule("select: { cursor: abc }\nactions: [abort]")).code).toBe("engine-owned");
  });

  it("active_step_id is a step id or a non-empty step name", () => {
    expect(errorsOf(loadText(rule("select: { active_step_id: First step }\nactions: [abort]")))).toEqual([]);
    expect(only(rule('select: { active_step_id: "" }\nactions: [abort]')).message).toMatch(/"select\.active_step_id" in rule "r"/);
  });

  it("bad rule name", () => {
    expect(only(ruleFile("workflow: 1\nactions: [abort]", '"has space"')).message).toMatch(/^rule name "has space" may use letters, digits/);
  });

  it("actions: empty list", () => {
    expect(only(rule("actions: []")).message).toBe('"actions" in rule "r" must not be empty');
  });

  it("actions: unknown bare word", () => {
    expect(only(rule("actions: [abrt]"))).toMatchObject({ code: "unknown-action", message: 'unknown action "abrt" in rule "r"; did you mean "abort"?' });
  });

  it("actions: a kind that needs options", () => {
    expect(only(rule("actions: [report]")).message).toBe('action "report" in rule "r" needs its options: write "- report: { ... }"');
  });

  it("actions: two kinds in one entry", () => {
    expect(only(rule("actions:\n  - abort: {}\n    report: { group_by: tags }")).message).toMatch(/^an action holds one kind: put "abort" and "report" in separate entries/);
  });

  it("actions: abort with options", () => {
    expect(only(rule("actions:\n  - abort: { now: true }")).message).toBe('unknown key "now" in actions[0].abort of rule "r"');
  });

  it("actions: a step action picks its own branch (no report/abort noise)", () => {
    const r = errorsOf(loadText(rule("actions:\n  - complete_step: { step: [x], inputs: [{ action: 1 }] }")));
    expect(r.map((d) => d.message)).toEqual([
      '"actions[0].complete_step.step" in rule "r" must be an integer or a string, not a list (The step to act on: ' +
        'its id, or its name (e.g. "Manager approval"). It must be active in the instance when the plan is applied.)',
      'missing required key "value" in actions[0].complete_step.inputs[0] of rule "r"',
    ]);
  });

  it("actions: a number", () => {
    expect(only(rule("actions: [3]")).message).toMatch(new RegExp(`^action in rule "r" must be "abort" or a mapping with one of ${ACTION_KINDS.join(", ")}, not an integer`));
  });

  it("report group_by missing", () => {
    expect(only(rule("actions:\n  - report: { columns: [id] }")).message).toBe('missing required key "group_by" in actions[0].report of rule "r"');
  });

  it("report on an undeclared alias", () => {
    expect(only(rule("actions:\n  - report: { group_by: tags, columns: [fields.amount] }")).message).toMatch(/^unknown field alias "amount" in report column of rule "r" \(the rule declares no aliases/);
  });

  it("a field of the wrong shape", () => {
    expect(only(rule("fields:\n  amount: { step: 1 }\nactions: [abort]")).message).toBe('missing required key "action" in fields.amount of rule "r"');
  });

  it("fields: alias read while no fields are declared", () => {
    expect(only(rule("when: fields.amount > 1\nactions: [abort]")).message).toMatch(/unknown field alias "amount" .*the rule declares no aliases/);
  });
});

describe("YAML messages", () => {
  it("tab indentation", () => {
    expect(only("version: 1\nrules:\n\t- name: x\n").message).toMatch(/tab used for indentation/);
  });

  it("text after a quoted value", () => {
    expect(only(rule('when: "vip" in tags\nactions: [abort]'))).toMatchObject({ line: 5, message: expect.stringMatching(/quote the whole value/) });
  });

  it("an unclosed flow mapping points at its opener, skipping brackets in quotes and comments", () => {
    expect(only('version: 1 # [\nrules: ["[",\n  { name: x\n')).toMatchObject({ line: 3, col: 3, message: expect.stringMatching(/^unclosed "\{"/) });
  });

  it("two documents", () => {
    expect(only("version: 1\nrules: []\n---\nversion: 1\n").message).toMatch(/one YAML document/);
  });
});

describe("JSONata messages", () => {
  it("position inside a double-quoted scalar", () => {
    expect(only(rule('when: "instance.status = = 1"\nactions: [abort]'))).toMatchObject({ line: 5, col: 30, code: "jsonata" });
  });

  it("position inside a single-quoted scalar with an escaped quote", () => {
    // '' is one quote in the value: the ")" is at index 21 of the value but 23 characters into the scalar
    expect(only(rule("when: 'instance.name = ''it'' )'\nactions: [abort]"))).toMatchObject({ line: 5, col: 35, code: "jsonata" });
  });

  it("position on the second line of a literal block", () => {
    const e = only(rule("when: |\n  instance.status = \"running\"\n    and ]\nactions: [abort]"));
    expect(e).toMatchObject({ line: 7, col: 13, code: "jsonata" });
  });

  it("unterminated template", () => {
    expect(only(rule('actions:\n  - save_step: { step: 1, inputs: [{ action: 2, value: "a {{ fields" }] }'))).toMatchObject({
      code: "template",
      message: expect.stringMatching(/^unterminated "\{\{"/),
    });
  });

  it("a template holding braces and strings with }} closes at the right place", () => {
    const r = loadText(rule('actions:\n  - save_step: { step: 1, inputs: [{ action: 2, value: "{{ {\\"a\\": \\"}}\\"}.a }}" }] }'));
    expect(errorsOf(r)).toEqual([]);
  });

  it("a name missing the fields. prefix is a warning with a hint", () => {
    const r = loadText(rule("fields:\n  amount: { step: 1, action: 2 }\nwhen: amount > 3\nactions: [abort]"));
    expect(errorsOf(r)).toEqual([]);
    expect(warningsOf(r).map((d) => d.message)).toEqual([expect.stringMatching(/"amount" is not in the context .*; did you mean "fields\.amount"\?/)]);
  });

  it("a record key missing the instance. prefix is a warning with a hint", () => {
    const r = loadText(rule("when: status = 'running'\nactions: [abort]"));
    expect(warningsOf(r).map((d) => d.message)).toEqual([expect.stringMatching(/did you mean "instance\.status"\?/)]);
  });

  it("helper functions and bound lambdas are known", () => {
    const r = loadText(rule("when: ($f := function($x){ $x > 1 }; $f($hoursUntil(instance.deadline)) and $daysSince(now) < 1)\nactions: [abort]"));
    expect(r.diagnostics).toEqual([]);
  });
});
