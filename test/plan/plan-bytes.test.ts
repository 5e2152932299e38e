/**
 * The plans of every rule set shipped (rules/, examples/, test/fixtures/rules/) written in pieces are the bytes the
 * whole plan stringified at once gives, and digested in pieces the canonical digest: the plan file format
 * (docs/design.md, "The JSON plan") does not depend on how it is written or how the planner held its reports.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planRuleSet } from "../../src/commands/plan.js";
import { canonicalJson, planDigest, withDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { planFileText } from "../../src/plan/write.js";
import { loadRules } from "../../src/rules/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { visibleJson } from "../../src/text/visible-json.js";
import { captureIO, connection } from "../apply/helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Each rule set as a user plans it: a folder of rule files, or one fixture file. */
async function ruleSets(): Promise<string[]> {
  const examples = (await readdir(join(ROOT, "examples"), { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => join(ROOT, "examples", d.name));
  const withRules: string[] = [];
  for (const dir of examples)
    if ((await readdir(dir)).some((f) => f.endsWith(".yaml") && !f.endsWith(".test.yaml"))) withRules.push(dir);
  const fixtures = (await readdir(join(ROOT, "test/fixtures/rules")))
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => join(ROOT, "test/fixtures/rules", f));
  return [join(ROOT, "rules"), ...withRules, ...fixtures];
}

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 400, seed: 17 });
});
afterAll(async () => {
  await sb.close();
});

describe("plans written in pieces", () => {
  it("are, for every rule set shipped, the whole plan stringified at once, with the canonical digest", async () => {
    const sets = await ruleSets();
    expect(sets.length).toBeGreaterThanOrEqual(9);
    let rows = 0;
    for (const path of sets) {
      const loaded = await loadRules([path]);
      expect(loaded.ruleSet, path).toBeDefined();
      if (!loaded.ruleSet) continue;
      const plan = await planRuleSet(loaded.ruleSet, connection(sb), captureIO(), { quiet: true });
      const plain = JSON.parse(JSON.stringify(plan)) as Plan;
      expect(planFileText(plan), path).toBe(`${visibleJson(JSON.stringify(withDigest(plain), null, 2))}\n`);
      const reference = `sha256:${createHash("sha256").update(canonicalJson(plain)).digest("hex")}`;
      expect(planDigest(plan), path).toBe(reference);
      rows += plan.reports.reduce((n, r) => n + r.rows.length, 0);
    }
    // the rule sets do report: rows were written and digested in pieces
    expect(rows).toBeGreaterThan(50);
  });
});
