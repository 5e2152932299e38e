/**
 * Offline checks and messages that say what to fix: a misspelt workflow name against the catalog (in every rule), a
 * key indented one space too deep, `- abort: true`, JSONata syntax errors in words, one message per misspelt step,
 * and waiting helpers naming a step the catalog does not have.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runValidate } from "../../src/commands/validate.js";
import { tempDir } from "../helpers/temp.js";

const CATALOG = {
  format_version: 1,
  pulled_at: "2026-11-01T00:00:00Z",
  base_url: "http://127.0.0.1:1/api",
  workflows: [
    {
      workflow: { id: 1042, name: "Expense claim", folder: null },
      source: { instance_id: 1, started_time: "2026-01-01T00:00:00Z" },
      steps: [
        { id: 20110, name: "Submit claim", position: 1, type: "form", actions: [{ id: 50220, name: "Title", type: "text" }] },
        { id: 20111, name: "Manager approval", position: 2, type: "form", actions: [{ id: 50230, name: "Comment", type: "text" }] },
      ],
    },
    {
      workflow: { id: 1045, name: "Access request", folder: null },
      source: { instance_id: 2, started_time: "2026-01-01T00:00:00Z" },
      steps: [{ id: 20140, name: "Request access", position: 1, type: "form", actions: [] }],
    },
  ],
};

async function validate(rules: string, catalog = true): Promise<{ output: string; exitCode: number }> {
  const dir = await tempDir();
  const file = join(dir, "rules.yaml");
  await writeFile(file, rules);
  const workflows = join(dir, "flowrules.workflows.json");
  if (catalog) await writeFile(workflows, JSON.stringify(CATALOG));
  const r = await runValidate([file], { format: "text", ...(catalog ? { workflows } : {}) });
  return { output: r.output.replaceAll(`${file}:`, "rules.yaml:"), exitCode: r.exitCode };
}

const head = "version: 1\nrules:\n  - name: r\n";

describe("offline checks", () => {
  it("a misspelt workflow name is an error against the catalog even in a rule without steps or fields", async () => {
    const r = await validate(`${head}    workflow: { name: Acess request }\n    select: { status: [running] }\n    actions: [abort]\n`);
    expect(r.exitCode).toBe(1);
    expect(r.output).toContain('workflow "Acess request" is not in');
    expect(r.output).toContain('did you mean "Access request"?');
  });

  it("a key indented one space too deep gets one message about indentation", async () => {
    const r = await validate(`${head}    workflow: 1042\n     select: { status: [running] }\n    actions: [abort]\n`, false);
    const errors = r.output.split("\n").filter((l) => l.includes(" error "));
    expect(errors).toEqual(['rules.yaml:5:6  error  "select" is indented 5 spaces, deeper than "workflow" above it (4): keys of one mapping start in the same column, so indent it by 4']);
  });

  it("- abort: true says to write - abort", async () => {
    const r = await validate(`${head}    workflow: 1042\n    actions:\n      - abort: true\n`, false);
    expect(r.output).toContain('"actions[0].abort" in rule "r" takes no value: write "- abort" (a bare word)');
  });

  it("a JSONata syntax error in words, with its column", async () => {
    const r = await validate(`${head}    workflow: 1042\n    when: fields amount > 3\n    actions: [abort]\n`, false);
    expect(r.output).toContain('rules.yaml:5:18  error  invalid JSONata in "when" of rule "r": unexpected "amount" at column 8 of the expression: an operator');
    expect(r.output).not.toContain("Syntax error");
  });

  it("a misspelt step gets one message, the error", async () => {
    const r = await validate(`${head}    workflow: 1042\n    select: { status: [running], active_step_id: 20111 }\n    actions:\n      - complete_step: { step: 20119 }\n`);
    expect(r.exitCode).toBe(1);
    expect(r.output).toContain("step 20119 is not a step of workflow 1042");
    expect(r.output).not.toContain("may well not be");
  });

  it("a waiting helper naming a step the workflow does not have is a located error", async () => {
    const r = await validate(`${head}    workflow: 1042\n    when: $waitingDays("Manager aproval") > 2\n    actions: [abort]\n`);
    expect(r.exitCode).toBe(1);
    expect(r.output).toMatch(/rules\.yaml:5:24 {2}error {2}.*no step named "Manager aproval".*20111 "Manager approval"/);
  });
});
