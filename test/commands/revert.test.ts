/**
 * `flowrules revert` (docs/forecast.md, "Revert") against the sandbox, with the built CLI: an apply of save_step,
 * complete_step and abort changes, then people at work on some of those instances through the API, then the revert
 * plan: it restores exactly the untouched fields (checked field by field against the sandbox), leaves and lists the
 * ones people changed, lists every complete_step and abort, is applied exactly once, and reverting the revert
 * restores the rule's values.
 */
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { plainValue } from "../../src/model/field-values.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

const RULES = `version: 1
rules:
  - name: budget-note
    workflow: 1044
    fields:
      comment: { step: 20131, action: 50264 }
    select: { status: [running], active_step_id: 20131 }
    actions:
      - save_step:
          step: 20131
          inputs:
            - action: 50264
              value: { inputValue: "seen by the budget rule" }
            - action: 50263
              value: { inputValue: { radioItemSelected: Reject } }
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111, tags: [travel] }
    actions:
      - complete_step: { step: 20111 }
  - name: abort-old-onboardings
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P60D }
    actions: [abort]
`;

interface Change {
  id: string;
  rule: string;
  kind: string;
  instance_id: number;
  step_id?: number;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}
interface PlanFile {
  changes: Change[];
  revert?: {
    not_reversible: Array<{ instance_id: number; kind: string }>;
    left: Array<{ instance_id: number; field?: string; reason: string }>;
  };
}

let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 300, seed: 11 });
  dir = await tempDir("flowrules-revert-");
  await writeFile(join(dir, "rules.yaml"), RULES);
});
afterAll(async () => {
  await sb.close();
});

const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" });
const value = (id: number, action: number): unknown => plainValue(sb.store.peek(id)?.values.get(action)) ?? null;
const readPlan = async (file: string): Promise<PlanFile> => JSON.parse(await readFile(file, "utf8")) as PlanFile;

/** A person's save or completion, through the API as the product would send it. */
async function person(id: number, body: unknown): Promise<void> {
  const res = await fetch(`${sb.baseUrl}/instances/${id}/complete_step/`, {
    method: "POST",
    headers: { Authorization: "Api-Key sandbox-admin", "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

const posts = (): Array<{ path: string; body: unknown }> =>
  sb
    .requests()
    .filter((r) => r.method === "POST")
    .map((r) => ({ path: r.path, body: r.body }));

describe("flowrules revert", () => {
  it("sets back exactly the untouched fields, lists the rest, applies once, and a revert of the revert restores the rule's values", async () => {
    const planFile = join(dir, "plan.json");
    expect((await runCli(["plan", join(dir, "rules.yaml"), "--out", planFile, "-q"], env())).code).toBe(0);
    const applied = await runCli(["apply", planFile, "-q"], env());
    expect(applied.code, applied.stderr).toBe(0);
    const plan = await readPlan(planFile);
    const saves = plan.changes.filter((c) => c.rule === "budget-note");
    const completes = plan.changes.filter((c) => c.rule === "approve-expenses");
    const aborts = plan.changes.filter((c) => c.rule === "abort-old-onboardings");
    expect(saves.length).toBeGreaterThan(5);
    expect(completes.length).toBeGreaterThan(0);
    expect(aborts.length).toBeGreaterThan(0);
    // some saves wrote over an empty field: those are cleared by the revert
    expect(saves.some((c) => c.before["action 50263"] === null || c.before["fields.comment"] === null)).toBe(true);

    // people at work: one rewrites the comment of the first two, one completes the step of the third
    const [a, b, c] = saves.map((s) => s.instance_id);
    if (a === undefined || b === undefined || c === undefined) throw new Error("too few saves");
    await person(a, {
      step_id: 20131,
      mode: "save",
      actions: [{ action_id: 50264, input_object: { inputValue: "a person's note" } }],
    });
    await person(b, {
      step_id: 20131,
      mode: "save",
      actions: [{ action_id: 50264, input_object: { inputValue: "another note" } }],
    });
    await person(c, { step_id: 20131, mode: "complete", actions: [] });

    const undo = join(dir, "undo.json");
    sb.clearRequests();
    const reverted = await runCli(["revert", planFile, "--out", undo], env());
    expect(reverted.code, reverted.stderr).toBe(0);
    expect(posts()).toEqual([]); // writing the revert plan reads only
    const revert = await readPlan(undo);
    // every complete_step and abort listed with its instance
    expect(revert.revert?.not_reversible.map((n) => `${n.kind}:${n.instance_id}`).sort()).toEqual(
      [...completes, ...aborts].map((x) => `${x.kind}:${x.instance_id}`).sort(),
    );
    // the fields people changed, and the step people completed, left and listed
    const left = revert.revert?.left ?? [];
    expect(left.filter((l) => l.instance_id === a).map((l) => l.field)).toEqual(["action 50264"]);
    expect(left.filter((l) => l.instance_id === b).map((l) => l.field)).toEqual(["action 50264"]);
    expect(
      left
        .filter((l) => l.instance_id === c)
        .map((l) => l.field)
        .sort(),
    ).toEqual(["action 50263", "action 50264"]);
    expect(left.find((l) => l.instance_id === a)?.reason).toMatch(/changed since by someone else/);
    expect(reverted.stdout).toContain("Not reversible");
    // shown as any plan
    const shown = await runCli(["show", undo], env());
    expect(shown.stdout).toContain("Left as they are (4)");
    const page = await runCli(["show", undo, "--format", "html"], env());
    expect(page.stdout).toMatch(/<section id="revert">.*Not reversible/);

    sb.clearRequests();
    const applyUndo = await runCli(["apply", undo, "-q"], env());
    expect(applyUndo.code, applyUndo.stderr).toBe(0);
    // exactly one request per reverted instance, none twice
    const sent = posts().map((p) => p.path);
    expect(new Set(sent).size).toBe(sent.length);
    expect(sent.length).toBe(saves.length - 1); // c's step is no longer active: nothing to send there
    // field by field: untouched fields hold their value before the rule; changed ones what people wrote
    for (const s of saves) {
      const id = s.instance_id;
      const beforeComment = s.before["fields.comment"] ?? null;
      const beforeDecision = s.before["action 50263"] ?? null;
      if (id === c) {
        expect(value(id, 50264)).toBe("seen by the budget rule");
        continue;
      }
      expect(value(id, 50264), `comment of ${id}`).toEqual(
        id === a ? "a person's note" : id === b ? "another note" : beforeComment,
      );
      expect(value(id, 50263), `decision of ${id}`).toEqual(beforeDecision);
    }
    // applied once: the same apply again sends nothing
    sb.clearRequests();
    expect((await runCli(["apply", undo, "-q"], env())).code).toBe(0);
    expect(posts()).toEqual([]);

    // a revert of the revert restores the rule's values where people did not change them
    const redo = join(dir, "redo.json");
    expect((await runCli(["revert", undo, "--out", redo, "-q"], env())).code).toBe(0);
    expect((await runCli(["apply", redo, "-q"], env())).code).toBe(0);
    for (const s of saves) {
      if (s.instance_id === c) continue;
      if (s.instance_id !== a && s.instance_id !== b)
        expect(value(s.instance_id, 50264)).toBe("seen by the budget rule");
      expect(value(s.instance_id, 50263)).toBe("Reject");
    }
  });

  it("reverts a watcher's cycle named as `history` names it (--state DIR --cycle ID)", async () => {
    const rules = join(dir, "rules.yaml");
    const planFile = join(dir, "cycle-plan.json");
    expect((await runCli(["plan", rules, "--rule", "budget-note", "--out", planFile, "-q"], env())).code).toBe(0);
    expect((await runCli(["apply", planFile, "-q"], env())).code).toBe(0);
    // a cycle folder as the watcher writes it: <state>/watch/cycles/<id>/plan.json and its journal beside it
    const id = "2026-12-01T09-00-00-000Z-41-3";
    const folder = join(dir, "state", "watch", "cycles", id);
    await mkdir(folder, { recursive: true });
    await copyFile(planFile, join(folder, "plan.json"));
    await copyFile(`${planFile}.journal.jsonl`, join(folder, "plan.json.journal.jsonl"));
    const out = join(dir, "cycle-undo.json");
    const r = await runCli(["revert", "--state", join(dir, "state"), "--cycle", id, "--out", out, "-q"], env());
    expect(r.code, r.stderr).toBe(0);
    const undo = await readPlan(out);
    const applied = (await readPlan(planFile)).changes;
    expect(undo.changes.map((c) => c.instance_id).sort()).toEqual(applied.map((c) => c.instance_id).sort());
    expect(undo.changes.every((c) => c.rule === "budget-note.revert")).toBe(true);
    // the journal names its plan as well as the plan itself does
    const viaJournal = join(dir, "journal-undo.json");
    expect((await runCli(["revert", `${planFile}.journal.jsonl`, "--out", viaJournal, "-q"], env())).code).toBe(0);
    expect((await readPlan(viaJournal)).changes.map((c) => c.id)).toEqual(undo.changes.map((c) => c.id));
  });

  it("refuses, in one line, a plan never applied and a cycle that does not exist", async () => {
    const planFile = join(dir, "never.json");
    expect((await runCli(["plan", join(dir, "rules.yaml"), "--out", planFile, "-q"], env())).code).toBe(0);
    for (const args of [[planFile], ["--state", dir, "--cycle", "nope"], []]) {
      const r = await runCli(["revert", ...args], env());
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
