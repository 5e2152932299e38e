import { describe, expect, it } from "vitest";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import type { Plan } from "../../src/plan/types.js";
import { planDigest } from "../../src/plan/digest.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import { MARKDOWN_LIMIT } from "../../src/render/plan/markdown.js";
import { useColor } from "../../src/log/command-io.js";
import { writePlanFile } from "../../src/plan/write.js";
import { withDigest } from "../../src/plan/digest.js";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { instance } from "../helpers/instances.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { tempDir } from "../helpers/temp.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");

const RULES = `
version: 1
rules:
  - name: approve-small
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      comment: { step: 20111, action: 50230 }
    when: fields.amount < 100
    actions:
      - complete_step:
          step: 20111
          inputs: [ { action: 50230, value: { inputValue: "Approved {{ fields.amount }}" } } ]
  - name: stop-stale
    workflow: 1043
    actions: [abort]
  - name: by-tag
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    actions:
      - report: { title: Claims by tag, group_by: tags, columns: [id, name, fields.amount] }
`;

async function fixedPlan(): Promise<Plan> {
  const rs = await rulesFromYaml(RULES);
  const claims = [
    instance({
      id: 101,
      values: { "20111:50222": { inputValue: 40 }, "20111:50230": { inputValue: "" } },
      record: { tags: ["travel", "q4"], active_step_ids: [20111] },
    }),
    instance({
      id: 102,
      values: { "20111:50222": { inputValue: 400 } },
      record: { tags: [], active_step_ids: [20111] },
    }),
  ];
  const onboardings = [instance({ id: 201, process_id: 1043 })];
  return planFromInstances(
    [
      { rule: rs.rules[0]!, workflowId: 1042, instances: claims },
      { rule: rs.rules[1]!, workflowId: 1043, instances: onboardings },
      { rule: rs.rules[2]!, workflowId: 1042, instances: claims },
    ],
    NOW,
    { baseUrl: "http://127.0.0.1:4010/api", rulesDigest: "sha256:fixture" },
  );
}

describe("plan formats", () => {
  it("text: grouped by rule, legend of the symbols used, before → after, one summary line", async () => {
    const out = PLAN_FORMATS.text(await fixedPlan(), { color: false });
    expect(out).not.toMatch(/\x1b\[/);
    expect(out).toContain("Legend: ✓ complete a step   ✗ abort the instance");
    expect(out).not.toContain("save data"); // no save in this plan: not in the legend
    expect(out).toContain('fields.comment: "" → "Approved 40"');
    expect(out.trimEnd().split("\n").at(-1)).toBe("Plan: 1 step to complete, 1 instance to abort, 1 report.");
    await expect(out.replace(/flowrules \d+\.\d+\.\d+/g, "flowrules X")).toMatchFileSnapshot("__snapshots__/plan.txt");
  });

  it("text: colours only when asked, and never with NO_COLOR", async () => {
    const plan = await fixedPlan();
    expect(PLAN_FORMATS.text(plan, { color: true })).toMatch(/\x1b\[/);
    const io = { stdout: () => {}, stderr: () => {}, stdoutIsTTY: true, stderrIsTTY: true };
    expect(useColor({ ...io, env: {} })).toBe(true);
    expect(useColor({ ...io, env: { NO_COLOR: "1" } })).toBe(false);
    expect(useColor({ ...io, stdoutIsTTY: false, env: {} })).toBe(false);
  });

  it("markdown: summary and rule table outside <details>, diff inside, a Mermaid chart per report", async () => {
    const out = PLAN_FORMATS.markdown(await fixedPlan(), { color: false, planFile: "plan.json" });
    const details = out.indexOf("<details><summary>Changes");
    expect(details).toBeGreaterThan(0);
    expect(out.indexOf("**Plan: 1 step to complete, 1 instance to abort, 1 report.**")).toBeLessThan(details);
    expect(out.indexOf("| `approve-small` | 1042 | 2 | 1 | 1 | ok |")).toBeLessThan(details);
    expect(out).toContain(
      '```mermaid\npie showData title Claims by tag by tags\n    "(no tag)" : 1\n    "q4" : 1\n    "travel" : 1\n```',
    );
    expect(out).toContain('- fields.comment: ""\n+ fields.comment: "Approved 40"');
    await expect(out.replace(/flowrules \d+\.\d+\.\d+/g, "flowrules X")).toMatchFileSnapshot("__snapshots__/plan.md");
  });

  it("markdown: stays under the comment limit however big the plan, and says what was left out", async () => {
    const base = await fixedPlan();
    const template = base.changes[0]!;
    const changes = Array.from({ length: 5000 }, (_, i) => ({
      ...template,
      id: `approve-small:complete_step:${i}:20111`,
      instance_id: i,
      instance_name: `A rather long instance name to fill the comment quickly ${"x".repeat(60)} ${i}`,
    }));
    const big: Plan = { ...base, changes, summary: { ...base.summary, complete_step: changes.length } };
    const out = PLAN_FORMATS.markdown(big, { color: false, planFile: "plan.json" });
    expect(out.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(out).toMatch(
      /\d+ of 5000 changes left out to stay under the 65,536-character comment limit; the full plan is in `plan.json`/,
    );
    expect(out).toContain("**Plan: 5000 steps to complete, 1 instance to abort, 1 report.**");
    // the code fence is closed even when cut
    expect((out.match(/```/g) ?? []).length % 2).toBe(0);
  });

  it("json: the DESIGN contract with format_version 1, a digest over the content, stable across runs", async () => {
    const a = PLAN_FORMATS.json(await fixedPlan(), { color: false });
    const b = PLAN_FORMATS.json(await fixedPlan(), { color: false });
    expect(a).toBe(b);
    const doc = JSON.parse(a) as Plan & { digest: string };
    expect(doc).toMatchObject({
      format_version: 1,
      created_at: NOW.toISOString(),
      base_url: "http://127.0.0.1:4010/api",
    });
    expect(Object.keys(doc)).toEqual(expect.arrayContaining(["rules", "changes", "reports", "summary"]));
    for (const ch of doc.changes) {
      expect(Object.keys(ch)).toEqual(
        expect.arrayContaining(["rule", "instance_id", "kind", "request", "before", "after", "precondition"]),
      );
    }
    expect(doc.changes.find((c) => c.kind === "abort")?.request).toEqual({
      method: "POST",
      path: "/instances/bulk/abort",
      body: { ids: [201] },
    });
    expect(doc.reports[0]).toMatchObject({ rule: "by-tag", group_by: "tags", groups: expect.any(Array) });
    expect(doc.digest).toBe(planDigest(doc));
    const edited = { ...doc, changes: doc.changes.slice(1) };
    expect(planDigest(edited)).not.toBe(doc.digest);
  });

  it("--out writes, a batch of changes at a time, exactly the bytes of the pretty-printed signed plan", async () => {
    const dir = await tempDir("flowrules-planfile-");
    const base = await fixedPlan();
    const tricky = {
      ...base.changes[0]!,
      instance_name: 'line\nbreak "quoted" — ü',
      after: { "fields.note": "a\n  b" },
    };
    // more than one batch of changes (they are stringified 50 at a time), ending one past a batch
    const many = Array.from({ length: 101 }, (_, i) => ({
      ...base.changes[i % base.changes.length]!,
      id: `many:${i}`,
    }));
    for (const plan of [
      base,
      { ...base, changes: [] },
      { ...base, changes: [tricky, ...base.changes] },
      { ...base, changes: many },
    ]) {
      const file = join(dir, "plan.json");
      await writePlanFile(file, plan);
      expect(await readFile(file, "utf8")).toBe(`${JSON.stringify(withDigest(plan), null, 2)}\n`);
    }
  });
});
