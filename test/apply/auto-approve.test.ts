/** `apply <rules> --auto-approve` plans and applies in one go; without it, only a terminal "yes" applies. */
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, posts, runApply, tempDir, writeRules } from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** Rules that converge: once applied, a new plan finds nothing to do (the save is guarded by its own value). */
const CONVERGING = `
version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111, inputs: [{ action: 50230, value: { inputValue: "ok" } }] }
  - name: note-purchases
    workflow: 1044
    fields:
      comment: { step: 20131, action: 50264 }
    select: { status: [running], active_step_id: 20131 }
    when: fields.comment != "Checked by flowrules"
    actions:
      - save_step: { step: 20131, inputs: [{ action: 50264, value: { inputValue: "Checked by flowrules" } }] }
  - name: abort-onboardings
    workflow: 1043
    select: { status: [running] }
    actions: [abort]
`;

describe("apply --auto-approve", () => {
  it("plans and applies, keeps the plan and journal under .flowrules/runs; a second run right after changes nothing", async () => {
    sb = await startSandbox({ port: 0, instances: 200, seed: 41 });
    const dir = await tempDir();
    const rules = await writeRules(dir, CONVERGING);
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [rules], autoApprove: true }, io), io.err()).toBe(2);
    const applied = posts(sb).length;
    expect(applied).toBeGreaterThan(10);
    const runs = await readdir(join(dir, ".flowrules", "runs"));
    expect(runs.length).toBe(1);
    const runDir = join(dir, ".flowrules", "runs", runs[0] ?? "");
    expect(existsSync(join(runDir, "plan.json"))).toBe(true);
    expect(existsSync(join(runDir, "plan.json.journal.jsonl"))).toBe(true);
    expect(io.err()).toContain(
      `plan saved to .flowrules/runs/${runs[0]}/plan.json; journal .flowrules/runs/${runs[0]}/plan.json.journal.jsonl`,
    );
    expect(io.out()).toContain(`Journal: .flowrules/runs/${runs[0]}/plan.json.journal.jsonl`);

    sb.clearRequests();
    const again = captureIO();
    expect(await runApply(sb, dir, { paths: [rules], autoApprove: true }, again)).toBe(0);
    expect(posts(sb)).toEqual([]);
    expect(again.out()).toContain("Nothing to apply");
    expect((await readdir(join(dir, ".flowrules", "runs"))).length).toBe(1);
  });

  it("with --journal, the journal goes there (shared by runs of different plans)", async () => {
    sb = await startSandbox({ port: 0, instances: 120, seed: 42 });
    const dir = await tempDir();
    const rules = await writeRules(dir, CONVERGING);
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [rules], autoApprove: true, journal: "schedule.jsonl" }, io)).toBe(2);
    expect(existsSync(join(dir, "schedule.jsonl"))).toBe(true);
    expect(io.out()).toContain("Journal: schedule.jsonl");
  });

  it("on a terminal, shows the plan and applies only after 'yes'", async () => {
    sb = await startSandbox({ port: 0, instances: 120, seed: 43 });
    const dir = await tempDir();
    const rules = await writeRules(dir, CONVERGING);
    const questions: string[] = [];
    const confirm = (answer: string) => ({
      isTTY: true,
      ask: async (q: string) => {
        questions.push(q);
        return answer;
      },
    });
    const no = captureIO();
    expect(await runApply(sb, dir, { paths: [rules], confirm: confirm("y") }, no)).toBe(1);
    expect(no.out()).toMatch(/approve-expenses/); // the plan, in text
    expect(no.err()).toContain("Apply cancelled; nothing was changed.");
    expect(posts(sb)).toEqual([]);
    expect(questions[0]).toMatch(/Apply these \d+ changes to http:\/\/127\.0\.0\.1:\d+\/api\? Only 'yes' is accepted/);

    const yes = captureIO();
    expect(await runApply(sb, dir, { paths: [rules], confirm: confirm("yes") }, yes)).toBe(2);
    expect(posts(sb).length).toBeGreaterThan(0);
    expect(yes.out()).toMatch(/Apply complete/);
  });

  it("does not apply a plan with errors (a rule over its limit)", async () => {
    sb = await startSandbox({ port: 0, instances: 200, seed: 44 });
    const dir = await tempDir();
    const rules = await writeRules(
      dir,
      CONVERGING.replace("actions: [abort]", "actions: [abort]\n    limits: { max_instances: 1 }"),
    );
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [rules], autoApprove: true }, io)).toBe(1);
    expect(io.err()).toMatch(/not applying: the plan failed/);
    expect(posts(sb)).toEqual([]);
  });
});
