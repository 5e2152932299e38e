/**
 * The changed-since note is part of every plan view: each format of the registry shows the ref, the planned and
 * unchanged rules and the removed ones (a new format that forgets it fails here), and `show` of a saved plan too.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withChangedSince } from "../../src/ci/changed-plan.js";
import type { Plan } from "../../src/plan/types.js";
import { loadPlanFile } from "../../src/plan/read.js";
import { writePlanFile } from "../../src/plan/write.js";
import { PLAN_FORMATS, type PlanFormat } from "../../src/render/plan/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, MIXED_RULES, tempDir } from "../apply/helpers.js";

let sb: RunningSandbox;
let dir: string;
let plan: Plan;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 60, seed: 2 });
  dir = await tempDir();
  const made = await makePlan(sb, dir, MIXED_RULES);
  const names = made.plan.rules.map((r) => r.name);
  plan = withChangedSince(made.plan, {
    ref: "origin/main",
    warnings: [],
    commit: "0123456789abcdef0123",
    added: names.slice(0, 1),
    changed: names.slice(1, 2),
    unchanged: ["kept-rule"],
    removed: [{ name: "gone-rule", file: "rules/old.yaml" }],
  });
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the changed-since note in every plan view", () => {
  it("is shown by each format of the registry", () => {
    const formats = Object.keys(PLAN_FORMATS) as PlanFormat[];
    expect(formats.length).toBeGreaterThanOrEqual(4);
    for (const format of formats) {
      const out = PLAN_FORMATS[format](plan, { color: false });
      for (const word of ["origin/main", "0123456789ab", "gone-rule", "rules/old.yaml"])
        expect(out, `${format}: ${word}`).toContain(word);
      if (format !== "json") expect(out, format).toMatch(/1 unchanged rule not planned/);
    }
  });

  it("text: above the summary line; markdown: under the heading, outside the collapsed block", () => {
    const text = PLAN_FORMATS.text(plan, { color: false }).trimEnd().split("\n");
    expect(text.at(-1)).toMatch(/^Plan: /);
    expect(text.at(-2)).toBe("");
    expect(text.at(-3)).toBe("  - gone-rule (was in rules/old.yaml)");
    const md = PLAN_FORMATS.markdown(plan, { color: false });
    expect(md.startsWith("## flowrules plan\n\n> Changed since `origin/main` (0123456789ab): 2 rules planned")).toBe(
      true,
    );
    expect(md.indexOf("gone-rule")).toBeLessThan(md.indexOf("<details>"));
  });

  it("survives the plan file: show renders the note of a saved plan", async () => {
    const file = join(dir, "changed.json");
    await writePlanFile(file, plan);
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ removed_rules: [{ name: "gone-rule" }] });
    const { plan: read } = await loadPlanFile(file, "", undefined, { toShow: true });
    expect(PLAN_FORMATS.text(read, { color: false })).toBe(PLAN_FORMATS.text(plan, { color: false }));
    expect(PLAN_FORMATS.json(read, { color: false })).toBe(await readFile(file, "utf8"));
  });
});
