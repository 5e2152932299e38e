/** complete_step (src/actions/complete_step.ts): its schema fragment, compile, plan, views, plan-file checks, effect, send. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionKind, completeStep, mutatingKind } from "../../src/actions/index.js";
import { createClient } from "../../src/api/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { instance } from "../helpers/instances.js";
import {
  change,
  changeOf,
  diagnosticsOf,
  fragmentValidator,
  kindsRule,
  NOW,
  planFirst,
  record,
  refusals,
  T0,
  T1,
} from "./helpers.js";

const kind = mutatingKind("complete_step");

describe("complete_step in the registry", () => {
  it("is the module src/actions/complete_step.ts exports, a mutating kind written as an object", () => {
    expect(actionKind("complete_step")).toBe(completeStep);
    expect(kind).toBe(completeStep);
    expect(kind.mutating).toBe(true);
    expect(kind.bare).toBe(false);
    expect(kind.presentation).toMatchObject({ symbol: "✓", legend: "complete a step", colour: "green" });
    expect(kind.presentation.summary(1)).toBe("1 step to complete");
    expect(kind.presentation.summary(3)).toBe("3 steps to complete");
  });
});

describe("complete_step schema fragment", () => {
  const errors = fragmentValidator("complete_step");

  it("accepts a step with or without inputs", () => {
    expect(errors({ complete_step: { step: 20111 } })).toEqual([]);
    expect(errors({ complete_step: { step: 20111, inputs: [] } })).toEqual([]);
    expect(
      errors({
        complete_step: { step: 20111, inputs: [{ action: 50230, value: { inputValue: "ok {{ fields.amount }}" } }] },
      }),
    ).toEqual([]);
  });

  it("rejects a missing, non-positive or empty-named step, an input without value or with extra keys, unknown keys and the bare string", () => {
    expect(errors({ complete_step: {} })).not.toEqual([]);
    expect(errors({ complete_step: { step: 0 } })).not.toEqual([]);
    // a step may be named (docs/workflows.md), but not by an empty name
    expect(errors({ complete_step: { step: "" } })).not.toEqual([]);
    expect(errors({ complete_step: { step: 20111, inputs: [{ action: 50230 }] } })).not.toEqual([]);
    expect(errors({ complete_step: { step: 20111, inputs: [{ action: 50230, value: 1, note: "x" }] } })).not.toEqual(
      [],
    );
    expect(errors({ complete_step: { step: 20111, mode: "save" } })).not.toEqual([]);
    expect(errors({ complete_step: { step: 20111 }, abort: {} })).not.toEqual([]);
    expect(errors("complete_step")).not.toEqual([]);
  });

  it("has a description for editors on the entry and its body", () => {
    expect(kind.schema.description).toBe(kind.description);
    expect(kind.description).toMatch(/complete_step/);
  });

  it("a rule file with a bad entry fails to load, at the entry's line", () => {
    const errs = diagnosticsOf("      - complete_step: { step: 20111, inputs: [ { action: 50230 } ] }\n");
    expect(errs.length).toBeGreaterThan(0);
    expect(errs[0]?.line).toBe(7);
    expect(errs.map((e) => e.message).join("\n")).toMatch(/value/);
  });
});

describe("complete_step compile (test/fixtures/rules/kinds.yaml)", () => {
  it("compiles the step and each input's value, templates included", () => {
    const action = kindsRule("approve").actions[0];
    expect(action).toMatchObject({
      kind: "complete_step",
      step: 20111,
      inputs: [{ action: 50230 }, { action: 50231 }],
    });
    expect(action?.pos.line).toBeGreaterThan(0);
    if (action?.kind !== "complete_step") throw new Error("not a complete_step");
    expect(action.inputs[0]?.value).toMatchObject({ t: "object" });
    // completing reads no field values of its own; it targets its step
    expect(kind.reads(action)).toEqual([]);
    expect(kind.target(action)).toEqual({ step: 20111 });
    expect(kind.phrase(action)).toBe("completes step 20111");
  });
});

describe("complete_step plan", () => {
  const rule = kindsRule("approve");

  it("a running instance with the step active: id, request, before/after, precondition", async () => {
    const data = instance({
      id: 7,
      values: { "20111:50222": { inputValue: 40 }, "20111:50230": { inputValue: "pending" } },
      record: { active_step_ids: [20111], last_updated_time: T0 },
    });
    const c = await changeOf(rule, data);
    expect(c).toMatchObject({
      id: "approve:complete_step:7:20111",
      rule: "approve",
      instance_id: 7,
      instance_name: "Instance 7",
      process_id: 1042,
      kind: "complete_step",
      step_id: 20111,
      request: {
        method: "POST",
        path: "/instances/7/complete_step/",
        body: {
          step_id: 20111,
          mode: "complete",
          actions: [
            { action_id: 50230, input_object: { inputValue: "Approved 40" } },
            { action_id: 50231, input_object: { date: NOW.toISOString() } },
          ],
        },
      },
      precondition: { status: "running", active_step_id: 20111, last_updated_time: T0 },
    });
    // a field is named by its alias when the rule has one; an unread value (action 50231) has no "before"
    expect(c.before).toEqual({ "step 20111": "active", "fields.comment": "pending" });
    expect(c.after).toEqual({
      "step 20111": "completed",
      "fields.comment": "Approved 40",
      "action 50231": NOW.toISOString(),
    });
  });

  it("without a record: no last_updated_time in the precondition; a step known active from a filtered list plans", async () => {
    const data = {
      ...instance({ id: 8, values: { "20111:50222": { inputValue: 5 } } }),
      stepActive: new Map([[20111, true]]),
    };
    const c = await changeOf(rule, data);
    expect(c.precondition).toEqual({ status: "running", active_step_id: 20111 });
  });

  it("skips an instance that is not running, or whose step is not active, saying why", async () => {
    expect(await planFirst(rule, instance({ id: 9, status: "completed" }))).toEqual({
      skipped: "the instance is completed",
    });
    expect(await planFirst(rule, instance({ id: 9, status: "aborted" }))).toEqual({
      skipped: "the instance is aborted",
    });
    expect(await planFirst(rule, instance({ id: 9, record: { active_step_ids: [20112] } }))).toEqual({
      skipped: "the step is not active",
    });
    const listed = { ...instance({ id: 9 }), stepActive: new Map([[20111, false]]) };
    expect(await planFirst(rule, listed)).toEqual({ skipped: "the step is not active" });
    // the record's active_step_ids win over what a list said
    const both = {
      ...instance({ id: 9, record: { active_step_ids: [20111] } }),
      stepActive: new Map([[20111, false]]),
    };
    expect(await planFirst(rule, both)).toHaveProperty("change");
  });
});

describe("complete_step views and plan-file checks", () => {
  it("describe() labels the change by its step; changeTarget() is the step", () => {
    expect(kind.describe(change("complete_step"))).toEqual({
      label: "complete step 20111",
      effect: "completes step 20111",
    });
    expect(kind.describe(change("complete_step", { step_id: undefined }))).toEqual({
      label: "complete step ?",
      effect: "completes step ?",
    });
    expect(kind.changeTarget(change("complete_step"))).toEqual({ step: 20111 });
  });

  it("checkChange() accepts the change as planned", () => {
    expect(refusals(kind.checkChange, change("complete_step"))).toEqual([]);
  });

  it("checkChange() refuses a request that says another instance, step or mode than the change", () => {
    const c = change("complete_step");
    expect(
      refusals(kind.checkChange, { ...c, request: { ...c.request, path: "/instances/2/complete_step/" } }),
    ).toEqual(["request.path: expected /instances/1/complete_step/"]);
    expect(
      refusals(kind.checkChange, {
        ...c,
        request: {
          ...c.request,
          body: {
            step_id: 20112,
            mode: "complete",
            actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }],
          },
        },
      }),
    ).toEqual(["request.body.step_id: expected 20111 (the change's step_id)"]);
    expect(
      refusals(kind.checkChange, {
        ...c,
        request: {
          ...c.request,
          body: { step_id: 20111, mode: "save", actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }] },
        },
      }),
    ).toEqual(['request.body.mode: a complete_step change is sent with mode "complete"']);
    expect(refusals(kind.checkChange, { ...c, precondition: { status: "running", active_step_id: 20112 } })).toEqual([
      "precondition.active_step_id: expected 20111 (the change's step_id)",
    ]);
    expect(refusals(kind.checkChange, change("complete_step", { step_id: undefined }))).toEqual([
      "step_id: a complete_step change needs step_id",
    ]);
  });

  it("checkChange() refuses a body that is not a complete_step request, at the place inside it", () => {
    const c = change("complete_step");
    const out = refusals(kind.checkChange, {
      ...c,
      request: { ...c.request, body: { step_id: 20111, actions: [{ action_id: "x", input_object: 1 }] } },
    });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^request\.body\.actions\.0\.action_id: /);
  });
});

describe("complete_step effect (after an unknown outcome)", () => {
  it("complete_step: took effect when the step was completed, not when it is still active or the instance was aborted", () => {
    const c = change("complete_step");
    expect(
      kind.effect(c, record({ active_step_ids: [20112], steps: [{ id: 20111, completed_time: T1 }] })).applied,
    ).toBe(true);
    expect(kind.effect(c, record({ steps: [{ id: 20111, completed_time: null }] })).applied).toBe(false);
    expect(
      kind.effect(c, record({ active_step_ids: [], aborted_time: T1, steps: [{ id: 20111, completed_time: null }] }))
        .applied,
    ).toBe(false);
    // without completion times: moving on without an abort counts
    expect(kind.effect(c, record({ active_step_ids: [20112] })).applied).toBe(true);
  });

  it("says what the record showed", () => {
    const c = change("complete_step");
    expect(kind.effect(c, record({})).detail).toBe("step 20111 is still active");
    expect(kind.effect(c, record({ active_step_ids: [], steps: [{ id: 20111, completed_time: T1 }] })).detail).toBe(
      `step 20111 completed at ${T1}`,
    );
  });
});

describe("complete_step send (sandbox over HTTP)", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, seed: 3, instances: 60 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("sends one request per change; the record it answers shows the change took effect", async () => {
    expect(kind.send.mode).toBe("each");
    if (kind.send.mode !== "each") return;
    const target = sb.store
      .list(1042)
      .find((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20111));
    if (!target) throw new Error("no running expense claim with step 20111 active");
    const c = change("complete_step", {
      instance_id: target.id,
      request: {
        method: "POST",
        path: `/instances/${target.id}/complete_step/`,
        body: { step_id: 20111, mode: "complete", actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }] },
      },
    });
    expect(refusals(kind.checkChange, c)).toEqual([]);
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    sb.clearRequests();
    try {
      const answered = await kind.send.send(client, c);
      expect(answered.active_step_ids ?? []).not.toContain(20111);
      expect(kind.effect(c, answered).applied).toBe(true);
    } finally {
      await client.close();
    }
    const posts = sb.requests().filter((r) => r.method === "POST");
    expect(posts.map((r) => r.path)).toEqual([`/api/instances/${target.id}/complete_step/`]);
    expect(sb.store.get(target.id)?.activeStepIds).not.toContain(20111);
  });
});
