/** A saved plan applied after the data changed skips exactly the changed instances, as stale, and applies the rest. */
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  captureIO,
  changeKey,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  runApply,
  stateHolds,
  tempDir,
} from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe("apply refuses what went stale", () => {
  it("skips exactly the instances changed since the plan, by the list, and applies the rest", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 11 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const byKind = (k: string) => plan.changes.filter((c) => c.kind === k);
    const [c1, c2] = byKind("complete_step");
    const [s1] = byKind("save_step");
    const [a1] = byKind("abort");
    if (!c1 || !c2 || !s1 || !a1) throw new Error("the plan lacks a kind");

    // an outside edit that keeps the precondition (still running, step still active) — stale all the same
    sb.store.update(c1.instance_id, (i) => void i.tags.push("edited-after-plan"));
    // someone completed the step meanwhile, through the API
    const res = await fetch(`${sb.baseUrl}/instances/${c2.instance_id}/complete_step/`, {
      method: "POST",
      headers: { authorization: "Api-Key sandbox-admin", "content-type": "application/json" },
      body: JSON.stringify({ step_id: c2.step_id, actions: [], mode: "complete" }),
    });
    expect(res.status).toBe(200);
    // a value changed in the step to save
    sb.store.setValue(s1.instance_id, 50263, { inputValue: { radioItemSelected: "Reject" } });
    // the instance to abort was aborted by someone else
    expect(sb.store.abort(a1.instance_id)).toBe(true);
    const changed = new Set([c1, c2, s1, a1].map((c) => c.id));

    sb.clearRequests();
    const io = captureIO();
    const code = await runApply(sb, dir, { paths: [file] }, io);
    expect(code).toBe(1);

    const counts = effectiveMutations(sb);
    for (const c of plan.changes) {
      if (changed.has(c.id)) {
        expect(counts.get(changeKey(c)), c.id).toBeUndefined();
        expect(io.out()).toContain(`rule ${c.rule}, instance ${c.instance_id}, ${c.kind}`);
      } else {
        expect(counts.get(changeKey(c)), c.id).toBe(1);
        expect(stateHolds(sb, c), c.id).toBe(true);
      }
    }
    expect(io.out()).toMatch(/Apply incomplete: \d+ changes applied, 4 stale/);
    // the step named beside its id, as the plan names it
    expect(io.out()).toContain(
      `instance ${c2.instance_id}, complete_step step ${c2.step_id} "Manager approval": step ${c2.step_id} is no longer active`,
    );
    // cheap: one list per workflow and a read per listed planned instance, not one read per change
    const reads = sb.requests().filter((r) => r.method === "GET" && /\/instances\/\d+\/$/.test(r.path));
    expect(reads.length).toBe(4);
    const lists = sb.requests().filter((r) => r.method === "GET" && r.path.includes("/v2/processes/"));
    expect(lists.length).toBe(3);
    expect(lists.every((r) => typeof r.query.last_updated_time_after === "string")).toBe(true);
  });

  it("uses the plan's recorded last_updated_time: an instance touched just before the plan is not stale", async () => {
    sb = await startSandbox({ port: 0, instances: 200, seed: 2 });
    const dir = await tempDir();
    // reading the full record (instance.*) makes the planner record last_updated_time in the precondition
    const yaml = `
version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    when: instance.stage != "never"
    actions:
      - complete_step: { step: 20111, inputs: [] }
`;
    // touch one instance right before planning: it is on the changed list (clock-skew margin) but unchanged since
    const first = sb.store
      .list(1042)
      .find((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20111));
    if (!first) throw new Error("no candidate");
    sb.store.update(first.id, (i) => void i.tags.push("touched-before-plan"));
    const { file, plan } = await makePlan(sb, dir, yaml);
    const touched = plan.changes.find((c) => c.instance_id === first.id);
    expect(touched?.precondition.last_updated_time).toBeDefined();
    sb.clearRequests();
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [file] }, io)).toBe(2);
    expect(effectiveMutations(sb).get(`complete_step:${first.id}:20111`)).toBe(1);
    expect(io.out()).toMatch(/Staleness: 1 instance changed since the plan in its workflows, 1 read to check/);
  });
});
