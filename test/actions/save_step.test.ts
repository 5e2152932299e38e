/** save_step (src/actions/save_step.ts): its schema fragment, compile, plan, views, plan-file checks, effect, send. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionKind, mutatingKind, saveStep } from "../../src/actions/index.js";
import { createClient } from "../../src/api/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { instance } from "../helpers/instances.js";
import {
  change,
  changeOf,
  diagnosticsOf,
  fragmentValidator,
  kindsRule,
  planFirst,
  record,
  refusals,
  T0,
} from "./helpers.js";

const kind = mutatingKind("save_step");

describe("save_step in the registry", () => {
  it("is the module src/actions/save_step.ts exports, a mutating kind written as an object", () => {
    expect(actionKind("save_step")).toBe(saveStep);
    expect(kind).toBe(saveStep);
    expect(kind.mutating).toBe(true);
    expect(kind.bare).toBe(false);
    expect(kind.presentation).toMatchObject({ symbol: "~", legend: "save data in a step", colour: "yellow" });
    expect(kind.presentation.summary(1)).toBe("1 to save");
    expect(kind.presentation.summary(4)).toBe("4 to save");
  });
});

describe("save_step schema fragment", () => {
  const errors = fragmentValidator("save_step");

  it("accepts a step with or without inputs", () => {
    expect(errors({ save_step: { step: 20131 } })).toEqual([]);
    expect(
      errors({ save_step: { step: 20131, inputs: [{ action: 50264, value: { inputValue: "Checked" } }] } }),
    ).toEqual([]);
    expect(
      errors({
        save_step: {
          step: 20112,
          inputs: [{ action: 50240, value: { inputValue: { itemsChecked: ["VAT valid"], itemsNotChecked: [] } } }],
        },
      }),
    ).toEqual([]);
  });

  it("rejects a missing step, an input whose action is neither a positive integer nor a name, unknown keys and the bare string", () => {
    expect(errors({ save_step: { inputs: [] } })).not.toEqual([]);
    expect(errors({ save_step: { step: 20131, inputs: [{ action: 0, value: 1 }] } })).not.toEqual([]);
    // a field may be named (docs/workflows.md), but not by an empty name
    expect(errors({ save_step: { step: 20131, inputs: [{ action: "", value: 1 }] } })).not.toEqual([]);
    expect(errors({ save_step: { step: 20131, inputs: { action: 50264, value: 1 } } })).not.toEqual([]);
    expect(errors({ save_step: { step: 20131, when: "x" } })).not.toEqual([]);
    expect(errors("save_step")).not.toEqual([]);
  });

  it("has a description for editors", () => {
    expect(kind.schema.description).toBe(kind.description);
    expect(kind.description).toMatch(/without completing/);
  });

  it("a rule file with a bad entry fails to load, at the entry's line", () => {
    const errs = diagnosticsOf(
      "      - save_step: { step: 20111, inputs: [ { action: 50230, value: 1, extra: 2 } ] }\n",
    );
    expect(errs.length).toBeGreaterThan(0);
    expect(errs[0]?.line).toBe(7);
    expect(errs.map((e) => e.message).join("\n")).toMatch(/extra/);
  });
});

describe("save_step compile (test/fixtures/rules/kinds.yaml)", () => {
  it("compiles the step and its inputs; a save reads the fields it writes", () => {
    const action = kindsRule("note").actions[0];
    expect(action).toMatchObject({ kind: "save_step", step: 20111, inputs: [{ action: 50230 }] });
    if (action?.kind !== "save_step") throw new Error("not a save_step");
    expect(kind.reads(action)).toEqual([{ step: 20111, action: 50230 }]);
    expect(kind.target(action)).toEqual({ step: 20111 });
    expect(kind.phrase(action)).toBe("saves step 20111");
  });
});

describe("save_step plan", () => {
  const rule = kindsRule("note");

  it("a running instance with the step active: id, request in mode save, before/after of the fields only, precondition", async () => {
    const data = instance({
      id: 11,
      values: { "20111:50230": { inputValue: "old note" } },
      record: { active_step_ids: [20111], last_updated_time: T0 },
    });
    const c = await changeOf(rule, data);
    expect(c).toMatchObject({
      id: "note:save_step:11:20111",
      rule: "note",
      instance_id: 11,
      kind: "save_step",
      step_id: 20111,
      request: {
        method: "POST",
        path: "/instances/11/complete_step/",
        body: {
          step_id: 20111,
          mode: "save",
          actions: [{ action_id: 50230, input_object: { inputValue: "Checked" } }],
        },
      },
      precondition: { status: "running", active_step_id: 20111, last_updated_time: T0 },
    });
    // a save leaves the step active: only the field moves
    expect(c.before).toEqual({ "fields.comment": "old note" });
    expect(c.after).toEqual({ "fields.comment": "Checked" });
  });

  it("skips an instance that is not running, or whose step is not active", async () => {
    expect(await planFirst(rule, instance({ id: 12, status: "aborted" }))).toEqual({
      skipped: "the instance is aborted",
    });
    expect(await planFirst(rule, instance({ id: 12, record: { active_step_ids: [] } }))).toEqual({
      skipped: "the step is not active",
    });
  });

  it("skips a save whose every value already holds, compared by meaning; plans it when a value differs or was not read", async () => {
    const held = await planFirst(rule, instance({ id: 13, values: { "20111:50230": { inputValue: "Checked" } } }));
    expect(held).toEqual({ skipped: "the step already holds these values" });
    // a plain string stored for a text field means the same as { inputValue: "Checked" }
    const plain = await planFirst(rule, instance({ id: 13, values: { "20111:50230": "Checked" } }));
    expect(plain).toEqual({ skipped: "the step already holds these values" });
    expect(
      await planFirst(rule, instance({ id: 13, values: { "20111:50230": { inputValue: "checked" } } })),
    ).toHaveProperty("change");
    const unread = await changeOf(rule, instance({ id: 13 }));
    expect(unread.before).toEqual({});
  });
});

describe("save_step views and plan-file checks", () => {
  it("describe() labels the change by its step; changeTarget() is the step", () => {
    expect(kind.describe(change("save_step"))).toEqual({ label: "save step 20111", effect: "saves step 20111" });
    expect(kind.changeTarget(change("save_step"))).toEqual({ step: 20111 });
  });

  it("checkChange() accepts the change as planned and refuses another path, step or mode", () => {
    const c = change("save_step");
    expect(refusals(kind.checkChange, c)).toEqual([]);
    expect(refusals(kind.checkChange, { ...c, request: { ...c.request, path: "/instances/1/save_step/" } })).toEqual([
      "request.path: expected /instances/1/complete_step/",
    ]);
    expect(
      refusals(kind.checkChange, {
        ...c,
        request: {
          ...c.request,
          body: {
            step_id: 20111,
            mode: "complete",
            actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }],
          },
        },
      }),
    ).toEqual(['request.body.mode: a save_step change is sent with mode "save"']);
    // a body without mode is a completion (the service's default), which a save_step change must not send
    expect(
      refusals(kind.checkChange, {
        ...c,
        request: {
          ...c.request,
          body: { step_id: 20111, actions: [{ action_id: 50230, input_object: { inputValue: "ok" } }] },
        },
      }),
    ).toEqual(['request.body.mode: a save_step change is sent with mode "save"']);
    expect(
      refusals(kind.checkChange, { ...c, step_id: 20112, precondition: { status: "running", active_step_id: 20112 } }),
    ).toEqual(["request.body.step_id: expected 20112 (the change's step_id)"]);
  });
});

describe("save_step effect (after an unknown outcome)", () => {
  it("save_step: took effect only when every value sent is stored", () => {
    const c = change("save_step");
    expect(
      kind.effect(c, record({ steps: [{ id: 20111, actions: [{ id: 50230, input_object: { inputValue: "ok" } }] }] }))
        .applied,
    ).toBe(true);
    expect(
      kind.effect(
        c,
        record({ steps: [{ id: 20111, actions: [{ id: 50230, input_object: { inputValue: "other" } }] }] }),
      ).applied,
    ).toBe(false);
    expect(kind.effect(c, record({ steps: [{ id: 20111, actions: [{ id: 50230 }] }] })).applied).toBe(false);
  });

  it("names the field that does not hold the value sent", () => {
    const c = change("save_step");
    expect(kind.effect(c, record({ steps: [{ id: 20111, actions: [{ id: 50230 }] }] })).detail).toBe(
      "action 50230 does not hold the value sent",
    );
  });
});

describe("save_step send (sandbox over HTTP)", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, seed: 4, instances: 60 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("sends one request per change; a fresh read with values shows the value stored and the step still active", async () => {
    expect(kind.send.mode).toBe("each");
    if (kind.send.mode !== "each") return;
    const target = sb.store
      .list(1044)
      .find((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20131));
    if (!target) throw new Error("no running purchase with step 20131 active");
    const c = change("save_step", {
      instance_id: target.id,
      process_id: 1044,
      step_id: 20131,
      request: {
        method: "POST",
        path: `/instances/${target.id}/complete_step/`,
        body: {
          step_id: 20131,
          mode: "save",
          actions: [{ action_id: 50264, input_object: { inputValue: "Checked by a kind test" } }],
        },
      },
      after: { "action 50264": "Checked by a kind test" },
      precondition: { status: "running", active_step_id: 20131 },
    });
    expect(refusals(kind.checkChange, c)).toEqual([]);
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    try {
      const answered = await kind.send.send(client, c);
      expect(answered.active_step_ids).toContain(20131);
      const fresh = await client.getInstance(target.id, { injectValues: true });
      expect(kind.effect(c, fresh)).toEqual({ applied: true, detail: "step 20131 holds every value sent" });
    } finally {
      await client.close();
    }
  });
});
