/** The corpus of broken files: one defect each, reported once, at the right place, with a message that helps. */
import { describe, expect, it } from "vitest";
import { loadRules } from "../../src/rules/index.js";
import { FIXTURES, errorsOf } from "./helpers.js";

interface Expected {
  file: string;
  line: number;
  col: number;
  code: string;
  message: RegExp;
}

const B = `${FIXTURES}/broken`;

const CASES: Array<[string, Omit<Expected, "file">]> = [
  ["bad-yaml.yaml", { line: 4, col: 15, code: "yaml", message: /^unclosed "\[": close it with "\]"/ }],
  ["duplicate-key.yaml", { line: 6, col: 5, code: "duplicate-key", message: /^duplicate key "when"/ }],
  ["unknown-key.yaml", { line: 5, col: 5, code: "unknown-key", message: /^unknown key "when_" in rule "typo"; did you mean "when"\?$/ }],
  ["wrong-type.yaml", { line: 5, col: 30, code: "schema", message: /^"limits\.max_instances" in rule "wrong-type" must be an integer, not a string$/ }],
  ["bad-enum.yaml", { line: 6, col: 16, code: "schema", message: /^"select\.status\[0\]" in rule "bad-enum" is "runing", not one of: running, completed, aborted; did you mean "running"\?$/ }],
  ["bad-priority.yaml", { line: 5, col: 25, code: "schema", message: /"select\.priority" .* is "X", not one of: H, V/ }],
  ["bad-date.yaml", { line: 6, col: 27, code: "schema", message: /"select\.started_time_after" in rule "bad-date" is "-30D", not a date-time: .*"now".*-P30D/ }],
  ["bad-runtime.yaml", { line: 6, col: 26, code: "schema", message: /"select\.total_runtime_min" .* is "90 minutes", not a duration: write 00:50, 01 09:30, 02:30:00 or PT50M/ }],
  ["bad-progress.yaml", { line: 6, col: 21, code: "schema", message: /"select\.progress_max" .* must be at most 100, not 150/ }],
  ["page-size.yaml", { line: 7, col: 7, code: "engine-owned", message: /^"page_size" is not allowed in select of rule "paging": the engine owns paging and ordering/ }],
  ["ordering.yaml", { line: 6, col: 7, code: "engine-owned", message: /^"ordering" is not allowed .* engine owns paging and ordering/ }],
  ["bad-jsonata.yaml", { line: 7, col: 27, code: "jsonata", message: /^invalid JSONata in "when" of rule "bad-jsonata": "<" cannot start a value at column 17 of the expression \(S0211\)$/ }],
  ["bad-jsonata-block.yaml", { line: 9, col: 17, code: "jsonata", message: /invalid JSONata in "when" of rule "bad-jsonata-block": unexpected "fields" at line 2, column 11 of the expression: an operator/ }],
  ["bad-template.yaml", { line: 10, col: 58, code: "jsonata", message: /^invalid JSONata in template in actions\[0\]\.complete_step\.inputs\[0\]\.value of rule "bad-template": expected "\)" before the end of the expression/ }],
  ["unknown-alias.yaml", { line: 8, col: 18, code: "unknown-field", message: /^unknown field alias "amout" in "when" of rule "unknown-alias"; did you mean "amount"\? \(declared: amount, currency\)$/ }],
  ["bad-report-column.yaml", { line: 6, col: 55, code: "report-key", message: /^unknown report column "deadlin" in rule "bad-column"; did you mean "deadline"\?/ }],
  ["bad-group-by.yaml", { line: 8, col: 29, code: "report-key", message: /^unknown group_by "amonut" in rule "bad-group-by"; did you mean "fields\.amount"\?/ }],
  ["version-2.yaml", { line: 1, col: 10, code: "version", message: /^version must be 1 .*not 2$/ }],
  ["limit-zero.yaml", { line: 6, col: 30, code: "limit", message: /^"limits\.max_instances" in rule "limit-zero" must be at least 1, not 0$/ }],
  ["unknown-action.yaml", { line: 6, col: 9, code: "unknown-action", message: /^unknown action "complete_stp" in rule "unknown-action"; did you mean "complete_step"\?$/ }],
  ["action-typo-in-report.yaml", { line: 6, col: 35, code: "unknown-key", message: /^unknown key "colums" in actions\[0\]\.report of rule "report-typo"; did you mean "columns"\?$/ }],
  ["bad-alias-name.yaml", { line: 6, col: 7, code: "alias", message: /^field alias "total-amount" in rule "bad-alias" must be an identifier/ }],
  ["workflow-bad.yaml", { line: 4, col: 17, code: "unknown-key", message: /^unknown key "nam" in workflow of rule "workflow-bad"; did you mean "name"\?$/ }],
  ["missing-actions.yaml", { line: 3, col: 5, code: "schema", message: /^missing required key "actions" in rule "no-actions"$/ }],
  ["unknown-function.yaml", { line: 5, col: 12, code: "unknown-function", message: /^unknown function "\$dayssince" .*; did you mean "\$daysSince"\?$/ }],
  ["name-call.yaml", { line: 5, col: 11, code: "unknown-function", message: /^"not\(…\)" in "when" of rule "name-call" calls a name, not a function .*; did you mean "\$not"\?$/ }],
];

describe("broken rule files: one located error each", () => {
  it.each(CASES)("%s", async (name, exp) => {
    const file = `${B}/${name}`;
    const r = await loadRules([file]);
    expect(r.ruleSet).toBeUndefined();
    const errors = errorsOf(r);
    expect(errors).toHaveLength(1);
    const e = errors[0]!;
    expect({ file: e.file, line: e.line, col: e.col, code: e.code }).toEqual({ file, line: exp.line, col: exp.col, code: exp.code });
    expect(e.message).toMatch(exp.message);
  });

  it("covers every file of the corpus", async () => {
    const { readdir } = await import("node:fs/promises");
    const files = (await readdir(B)).filter((f) => f.endsWith(".yaml"));
    expect(files.sort()).toEqual(CASES.map(([n]) => n).sort());
  });

  it("duplicate rule names across two files: the error names both places", async () => {
    const r = await loadRules([`${B}/dup-names`]);
    const errors = errorsOf(r);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: `${B}/dup-names/b.yaml`, line: 6, col: 11, code: "duplicate-name", rule: "same-name" });
    expect(errors[0]!.message).toContain(`also defined at ${B}/dup-names/a.yaml:3:11`);
  });

  it("reports the mistakes of several files in one run, in file order", async () => {
    const r = await loadRules([`${B}/version-2.yaml`, `${B}/unknown-key.yaml`]);
    expect(errorsOf(r).map((d) => d.file)).toEqual([`${B}/version-2.yaml`, `${B}/unknown-key.yaml`]);
  });
});
