/** Writes YAML rule text to a fresh temp folder and loads it the way the CLI does. */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadRules } from "../../src/rules/index.js";
import type { RuleSet } from "../../src/rules/types.js";

export async function rulesFromYaml(yaml: string, name = "rules.yaml"): Promise<RuleSet> {
  const dir = await mkdtemp(join(tmpdir(), "flowrules-test-"));
  await writeFile(join(dir, name), yaml);
  const result = await loadRules([dir]);
  if (!result.ruleSet) {
    throw new Error(`rules did not load:\n${result.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`).join("\n")}`);
  }
  return result.ruleSet;
}
