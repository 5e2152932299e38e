/** 4.4 POST /instances/{id}/complete_step/ — save and complete semantics, permissions and errors. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceRecord, InstanceState, RunningSandbox } from "../../src/sandbox/index.js";
import { NOW, call, postJson, start, statusOf } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 600 });
});
afterAll(() => sb.close());

/** Running instances of a workflow waiting on a step, not used by an earlier test. */
const used = new Set<number>();
function waitingOn(
  processId: number,
  stepId: number,
  extra: (i: InstanceState) => boolean = () => true,
): InstanceState {
  const inst = sb.store
    .list(processId)
    .find((i) => statusOf(i) === "running" && i.activeStepIds.includes(stepId) && !used.has(i.id) && extra(i));
  if (!inst) throw new Error(`fixture: nothing waiting on ${stepId}`);
  used.add(inst.id);
  return inst;
}
const path = (id: number): string => `/instances/${id}/complete_step/`;

describe("4.4 complete_step", () => {
  it("mode save stores values, keeps the step active, updates last_updated_time, returns the record with values", async () => {
    const inst = waitingOn(1042, 20111);
    const res = await postJson<InstanceRecord>(sb, path(inst.id), {
      step_id: 20111,
      mode: "save",
      actions: [{ action_id: 50230, input_object: { inputValue: "looks fine" } }],
    });
    expect(res.status).toBe(200);
    expect(res.body.active_step_ids).toEqual([20111]);
    const action = res.body.process_snapshot.steps.flatMap((s) => s.actions).find((a) => a.id === 50230);
    expect(action?.input_object).toEqual({ inputValue: "looks fine" });
    const after = sb.store.get(inst.id);
    expect(after?.values.get(50230)).toEqual({ inputValue: "looks fine" });
    expect(after?.lastUpdatedTime).toBeGreaterThan(inst.lastUpdatedTime ?? 0);
    expect(res.body.last_updated_time).toBe(new Date(after?.lastUpdatedTime ?? 0).toISOString());
    expect(after?.stepCompletedTimes.has(20111)).toBe(false);
  });

  it("mode complete (the default) completes the step and activates the next by position", async () => {
    const inst = waitingOn(1042, 20111);
    const res = await postJson<InstanceRecord>(sb, path(inst.id), {
      step_id: 20111,
      actions: [{ action_id: 50231, input_object: { date: NOW.toISOString() } }],
    });
    expect(res.status).toBe(200);
    expect(res.body.active_step_ids).toEqual([20112]);
    expect(res.body.stage).toBe("Payment");
    expect(res.body.completed_time).toBeNull();
    const after = sb.store.get(inst.id);
    expect(after?.stepCompletedTimes.get(20111)).toBe(NOW.getTime());
    expect(after?.values.get(50231)).toEqual({ date: NOW.toISOString() });
    const withTimes = await call<InstanceRecord>(sb, `/instances/${inst.id}/?steps_time_frame=true`);
    expect(withTimes.body.process_snapshot.steps.find((s) => s.id === 20111)?.completed_time).toBe(NOW.toISOString());
  });

  it("completing the last step completes the instance", async () => {
    const inst = waitingOn(1042, 20112);
    const res = await postJson<InstanceRecord>(sb, path(inst.id), { step_id: 20112, actions: [], mode: "complete" });
    expect(res.status).toBe(200);
    expect(res.body.active_step_ids).toEqual([]);
    expect(res.body.completed_time).toBe(NOW.toISOString());
    expect(sb.store.status(inst.id)).toBe("completed");
    const list = await call<{ results: { id: number; status: string }[] }>(
      sb,
      `/v2/processes/1042/instances/?status=completed&page_size=500`,
    );
    expect(list.body.results.find((r) => r.id === inst.id)?.status).toBe("completed");
  });

  it("a whole instance can be walked from the first step to completed", async () => {
    const inst = waitingOn(1044, 20130);
    for (const step of [20130, 20131, 20132]) {
      const res = await postJson<InstanceRecord>(sb, path(inst.id), { step_id: step });
      expect(res.status).toBe(200);
    }
    expect(sb.store.status(inst.id)).toBe("completed");
  });

  it("input_object of unknown shape is stored as given; null clears the field", async () => {
    const inst = waitingOn(1042, 20111, (i) => i.values.has(50222));
    const odd = { whatever: [1, { deep: true }] };
    await postJson(sb, path(inst.id), {
      step_id: 20111,
      mode: "save",
      actions: [
        { action_id: 50230, input_object: odd },
        { action_id: 50222, input_object: null },
      ],
    });
    const after = sb.store.get(inst.id);
    expect(after?.values.get(50230)).toEqual(odd);
    expect(after?.values.has(50222)).toBe(false);
  });

  it("400 when the step is not active, naming the active steps", async () => {
    const inst = waitingOn(1042, 20111);
    const res = await postJson<{ detail: string }>(sb, path(inst.id), { step_id: 20110 });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/not active.*20111/);
  });

  it("400 when the instance is not running", async () => {
    const done = sb.store.list(1042).find((i) => statusOf(i) === "completed");
    const aborted = sb.store.list(1042).find((i) => statusOf(i) === "aborted");
    for (const inst of [done, aborted]) {
      const res = await postJson<{ detail: string }>(sb, path(inst?.id ?? 0), { step_id: 20111 });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/not running/);
    }
  });

  it("400 when an action id does not belong to the step, and nothing is saved", async () => {
    const inst = waitingOn(1042, 20111);
    const res = await postJson<{ detail: string }>(sb, path(inst.id), {
      step_id: 20111,
      actions: [
        { action_id: 50230, input_object: { inputValue: "x" } },
        { action_id: 50240, input_object: {} },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/50240/);
    expect(sb.store.get(inst.id)?.values.get(50230)).toEqual(inst.values.get(50230));
    expect(sb.store.get(inst.id)?.activeStepIds).toEqual([20111]);
  });

  it("400 when the step is not a step of the workflow", async () => {
    const inst = waitingOn(1042, 20111);
    const res = await postJson<{ detail: string }>(sb, path(inst.id), { step_id: 20121 });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/not a step of workflow 1042/);
  });

  const malformed: [string, unknown, RegExp][] = [
    ["missing step_id", { actions: [] }, /step_id/],
    ["string step_id", { step_id: "20111" }, /step_id/],
    ["bad mode", { step_id: 20111, mode: "finish" }, /mode/],
    ["actions not an array", { step_id: 20111, actions: {} }, /actions/],
    ["action without input_object", { step_id: 20111, actions: [{ action_id: 50230 }] }, /input_object/],
    ["fractional action_id", { step_id: 20111, actions: [{ action_id: 1.5, input_object: {} }] }, /action_id/],
    ["array body", [1, 2], /expected object/],
  ];
  for (const [label, body, message] of malformed) {
    it(`400 for a malformed body: ${label}`, async () => {
      const inst = waitingOn(1042, 20111);
      const res = await postJson<{ detail: string }>(sb, path(inst.id), body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(message);
    });
  }

  it("400 for malformed JSON and for a missing body; 415 for a non-JSON media type", async () => {
    const inst = waitingOn(1042, 20111);
    const bad = await call<{ detail: string }>(sb, path(inst.id), {
      method: "POST",
      body: "{oops",
      headers: { "Content-Type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/Malformed/);
    expect((await call(sb, path(inst.id), { method: "POST" })).status).toBe(400);
    const text = await call(sb, path(inst.id), {
      method: "POST",
      body: "step_id=1",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(text.status).toBe(415);
  });

  it("403 for a member on a step it does not own; the member may complete its own step; the lead any step of its workflows", async () => {
    const a = waitingOn(1042, 20112);
    const denied = await postJson<{ detail: string }>(sb, path(a.id), { step_id: 20112 }, "member");
    // the member sees this instance (it reached step 20111, which the member owns) but does not own 20112
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(/may not complete step 20112/);
    expect(sb.store.get(a.id)?.activeStepIds).toEqual([20112]);

    const b = waitingOn(1042, 20111);
    expect((await postJson(sb, path(b.id), { step_id: 20111 }, "member")).status).toBe(200);
    expect((await postJson(sb, path(a.id), { step_id: 20112 }, "lead")).status).toBe(200);
    expect(sb.store.status(a.id)).toBe("completed");
  });

  it("404 for an instance the key cannot see, and for unknown instances", async () => {
    const inst = waitingOn(1044, 20131);
    for (const key of ["lead", "member", "outsider"] as const) {
      expect((await postJson(sb, path(inst.id), { step_id: 20131 }, key)).status).toBe(404);
    }
    expect((await postJson(sb, path(1), { step_id: 20131 })).status).toBe(404);
    expect(sb.store.get(inst.id)?.activeStepIds).toEqual([20131]);
  });
});
