/**
 * CONTRIBUTING.md, "Adding an action kind", held to its word: `halt` (./halt-kind.ts, a batch kind of this test only)
 * is one module plus one entry in the list of kinds, and nothing else is edited. The list is replaced here for this
 * file alone (vi.mock of src/actions/kinds.ts, the one place kinds are listed); everything below reads the registry as
 * the product does: the rules' schema and compiler, the planner against the sandbox over HTTP, every plan format, the
 * plan-file checks and apply's batch path with its words.
 */
import { describe, expect, it, vi } from "vitest";
import { ACTION_KINDS, MUTATING_KINDS } from "../../src/actions/index.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import { compileSources } from "../../src/rules/index.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { closeAfterAll } from "../helpers/temp.js";
import { captureIO, handPlan, makePlan, runApply, tempDir } from "../apply/helpers.js";
import { halt } from "./halt-kind.js";
import type { Plan } from "../../src/plan/types.js";

vi.mock("../../src/actions/kinds.js", async (importOriginal) => {
  const listed = await importOriginal<typeof import("../../src/actions/kinds.js")>();
  const { halt: added } = await import("./halt-kind.js");
  return { ACTIONS: [...listed.ACTIONS, added] };
});

const RULES = `version: 1
rules:
  - name: halt-onboardings
    workflow: 1043
    select: { status: [running] }
    actions:
      - halt: { note: paused for the audit }
`;

const sandbox = closeAfterAll(await startSandbox({ port: 0, instances: 150, seed: 37 }));

describe("a kind added as its module and one entry in the list (halt, sent in batches)", () => {
  it("is registered and validated from its own schema fragment, errors at file:line:col", () => {
    expect(ACTION_KINDS).toContain("halt");
    expect(MUTATING_KINDS).toContain("halt");
    expect(compileSources([{ file: "ok.yaml", text: RULES }]).ruleSet?.rules[0]?.actions).toEqual([
      { kind: "halt", note: "paused for the audit", pos: { file: "ok.yaml", line: 7, col: 9 } },
    ]);
    const bad = compileSources([{ file: "bad.yaml", text: RULES.replace("note: paused for the audit", "notes: x") }]);
    expect(bad.ruleSet).toBeUndefined();
    expect(bad.diagnostics.find((d) => d.severity === "error")).toMatchObject({
      file: "bad.yaml",
      line: 7,
      message: expect.stringContaining("notes"),
    });
  });

  it("plans, renders in every plan format and applies in batches, in its own words", async () => {
    const dir = await tempDir();
    const running = sandbox.store.list(1043).filter((i) => i.abortedTime === null && i.completedTime === null);
    const { file, plan } = await makePlan(sandbox, dir, RULES);
    expect(plan.changes.map((c) => c.instance_id).sort()).toEqual(running.map((i) => i.id).sort());
    expect(plan.changes.every((c) => c.kind === "halt" && c.request.path === "/instances/bulk/abort")).toBe(true);
    expect(plan.summary.halt).toBe(running.length);

    for (const [format, render] of Object.entries(PLAN_FORMATS)) {
      const out = render(plan, { color: false });
      expect(out, format).toContain("halt");
      if (format !== "json") expect(out, format).toContain(halt.presentation.summary(running.length));
    }

    sandbox.clearRequests();
    const io = captureIO();
    expect(await runApply(sandbox, dir, { paths: [file], batchSize: 4, format: "json" }, io)).toBe(2);
    const batches = sandbox.requests().filter((r) => r.method === "POST" && r.path.endsWith("/instances/bulk/abort"));
    expect(batches.length).toBe(Math.ceil(running.length / 4));
    expect(batches.flatMap((r) => (r.body as { ids: number[] }).ids).sort()).toEqual(running.map((i) => i.id).sort());
    for (const i of running) expect(sandbox.store.status(i.id)).toBe("aborted");
    const doc = JSON.parse(io.out()) as {
      summary: Record<string, number>;
      changes: Array<{ kind: string; status: string; how?: string }>;
    };
    expect(doc.summary).toMatchObject({ applied: running.length, not_acted: 0 });
    expect(doc.changes.every((c) => c.kind === "halt" && c.status === "applied" && c.how === "returned")).toBe(true);
  });

  it("an id its batch did not return is not_acted, reported in the kind's words", async () => {
    const dir = await tempDir();
    const completed = sandbox.store.list(1043).find((i) => i.completedTime !== null && i.abortedTime === null);
    if (!completed) throw new Error("demo data lacks a completed onboarding");
    const change: Plan["changes"][number] = {
      id: `hand:halt:${completed.id}`,
      rule: "hand",
      instance_id: completed.id,
      instance_name: completed.name,
      process_id: completed.processId,
      kind: "halt",
      request: { method: "POST", path: "/instances/bulk/abort", body: { ids: [completed.id] } },
      before: { status: "running" },
      after: { status: "aborted" },
      precondition: { status: "running" },
    };
    const { file } = await handPlan(sandbox, dir, [change]);
    const io = captureIO();
    expect(await runApply(sandbox, dir, { paths: [file] }, io)).toBe(1);
    expect(io.out()).toContain("0 changes applied, 1 not halted");
    expect(io.out()).toContain(
      `Not halted (the bulk halt did not return their ids):\n  - rule hand, instance ${completed.id}, halt: still completed`,
    );
  });
});
