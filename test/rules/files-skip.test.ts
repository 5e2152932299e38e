import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRules } from "../../src/rules/index.js";
import { tempDir } from "../helpers/temp.js";

describe("YAML beside the rules that is not a rule file", () => {
  it("is left out inside folders (CI workflows, manifests) but read when named on its own", async () => {
    const dir = await tempDir("flowrules-skip-");
    await mkdir(join(dir, "ci"));
    await writeFile(join(dir, "ci", "workflow.yml"), "on: [pull_request]\njobs:\n  plan:\n    runs-on: ubuntu-latest\n");
    await writeFile(join(dir, "rules.yaml"), "version: 1\nrules:\n  - { name: a, workflow: 1042, actions: [abort] }\n");
    const inFolder = await loadRules([dir]);
    expect(inFolder.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(inFolder.ruleSet?.files).toEqual([join(dir, "rules.yaml")]);
    const named = await loadRules([join(dir, "ci", "workflow.yml")]);
    expect(named.ruleSet).toBeUndefined();
    expect(named.diagnostics[0]?.file).toBe(join(dir, "ci", "workflow.yml"));
  });

  it("still reports a rule file with a typo in one top-level key", async () => {
    const dir = await tempDir("flowrules-skip-");
    await writeFile(join(dir, "typo.yaml"), "version: 1\nrule:\n  - { name: a, workflow: 1042, actions: [abort] }\n");
    const r = await loadRules([dir]);
    expect(r.ruleSet).toBeUndefined();
    expect(r.diagnostics.some((d) => d.message.includes("rule"))).toBe(true);
  });
});
