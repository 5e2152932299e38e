/** Rule sets for tests: YAML text written to a fresh temp folder and loaded the way the CLI does, or a shared fixture file. */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileSources, loadRules } from "../../src/rules/index.js";
import type { RuleSet } from "../../src/rules/types.js";
import { tempDir } from "./temp.js";

/** Writes YAML rule text to a fresh temp folder and loads it the way the CLI does. */
export async function rulesFromYaml(yaml: string, name = "rules.yaml"): Promise<RuleSet> {
  const dir = await tempDir("flowrules-test-");
  await writeFile(join(dir, name), yaml);
  const result = await loadRules([dir]);
  if (!result.ruleSet) {
    throw new Error(
      `rules did not load:\n${result.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`).join("\n")}`,
    );
  }
  return result.ruleSet;
}

/** Rule files shared by several tests: test/fixtures/rules/<name>.yaml. */
export const RULE_FIXTURES = fileURLToPath(new URL("../fixtures/rules/", import.meta.url));

export function fixturePath(name: string): string {
  return join(RULE_FIXTURES, `${name}.yaml`);
}

/** The text of a shared rule file, for tests that write it elsewhere or extend it. */
export function fixtureText(name: string): string {
  return readFileSync(fixturePath(name), "utf8");
}

/** A shared rule file compiled in memory (no other file beside it); throws with file:line:col when it does not load. */
export function fixtureRules(name: string): RuleSet {
  const file = fixturePath(name);
  const result = compileSources([{ file, text: fixtureText(name) }]);
  if (!result.ruleSet) {
    throw new Error(
      `${file} did not load:\n${result.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`).join("\n")}`,
    );
  }
  return result.ruleSet;
}

/** One enforce rule approving expense claims at the manager step (the fresh-changes and watch tests act on it). */
export const APPROVE_RULES = `
version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "Approved by flowrules" }
`;
