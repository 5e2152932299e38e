/** 4.3 GET /instances/{id}/ — the full record and its snapshot options. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WORKFLOWS, type InstanceRecord, type RunningSandbox } from "../../src/sandbox/index.js";
import { call, start, statusOf } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 300 });
});
afterAll(() => sb.close());

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

describe("4.3 get instance", () => {
  it("returns the record of spec 2.3, without a status key, matching the store", async () => {
    const inst = sb.store.list(1042).find((i) => statusOf(i) === "running" && i.stepDeadlines.size > 0);
    if (!inst) throw new Error("fixture: no running instance with a step deadline");
    const res = await call<InstanceRecord>(sb, `/instances/${inst.id}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const r = res.body;
    expect(Object.keys(r)).toEqual([
      "process",
      "url",
      "id",
      "started_time",
      "completed_time",
      "aborted_time",
      "last_updated_time",
      "process_snapshot",
      "active_step_ids",
      "step_deadlines",
      "public_url",
      "stage",
      "visibility_mode",
      "name",
      "deadline",
      "priority",
      "tags",
      "step_assignments",
      "visibility_teams",
    ]);
    expect(r).not.toHaveProperty("status");
    expect(r.process).toBe(`${sb.baseUrl}/processes/1042/`);
    expect(r.url).toBe(`${sb.baseUrl}/instances/${inst.id}/`);
    expect(r.id).toBe(inst.id);
    expect(r.started_time).toBe(iso(inst.startedTime));
    expect(r.completed_time).toBeNull();
    expect(r.aborted_time).toBeNull();
    expect(r.last_updated_time).toBe(iso(inst.lastUpdatedTime));
    expect(r.active_step_ids).toEqual(inst.activeStepIds);
    expect(r.step_deadlines).toEqual([...inst.stepDeadlines].map(([step_id, d]) => ({ step_id, deadline: iso(d) })));
    expect(r.public_url.startsWith(`${sb.origin}/track/`)).toBe(true);
    expect(r.stage).toBe(inst.stage);
    expect(r.visibility_mode).toBe("involved");
    expect(r.name).toBe(inst.name);
    expect(r.deadline).toBe(iso(inst.deadline));
    expect(r.priority).toBe(inst.priority);
    expect(r.tags).toEqual(inst.tags);
    expect(r.step_assignments).toEqual([]);
    expect(r.visibility_teams).toEqual(inst.visibilityTeams);
  });

  it("the snapshot has the DESIGN shape; no values or times unless asked", async () => {
    const id = sb.store.ids(1042)[0] ?? 0;
    const r = (await call<InstanceRecord>(sb, `/instances/${id}/`)).body;
    const wf = WORKFLOWS.find((w) => w.id === 1042);
    expect(r.process_snapshot).toEqual({
      id: 1042,
      name: "Expense claim",
      steps: wf?.steps.map((s) => ({
        id: s.id,
        name: s.name,
        position: s.position,
        type: "form",
        actions: s.actions.map((a) => ({
          id: a.id,
          name: a.name,
          type: a.type,
          // the field's definition, as DESIGN's snapshot shape shows it
          settings: {
            label: a.name,
            type: a.type,
            required: a.required ?? false,
            ...(a.options ? { options: a.options } : {}),
          },
        })),
      })),
    });
  });

  it("inject_values=true adds input_object to actions that hold a value, and only to those", async () => {
    const inst = sb.store.list(1042).find((i) => i.values.size >= 3 && i.values.size < 8);
    if (!inst) throw new Error("fixture");
    const r = (await call<InstanceRecord>(sb, `/instances/${inst.id}/?inject_values=true`)).body;
    const actions = r.process_snapshot.steps.flatMap((s) => s.actions);
    for (const a of actions) {
      if (inst.values.has(a.id)) expect(a.input_object).toEqual(inst.values.get(a.id));
      else expect(a).not.toHaveProperty("input_object");
    }
    expect(actions.filter((a) => "input_object" in a)).toHaveLength(inst.values.size);
  });

  it("input objects follow the documented forms per field type", async () => {
    const types = new Map<string, unknown>();
    for (const inst of sb.store.list()) {
      const r = sb.store.record(inst.id, { injectValues: true });
      for (const a of r?.process_snapshot.steps.flatMap((s) => s.actions) ?? [])
        if (a.input_object !== undefined) types.set(a.type, a.input_object);
    }
    expect(types.get("text")).toEqual({ inputValue: expect.any(String) });
    expect(types.get("number")).toEqual({ inputValue: expect.any(Number) });
    expect(types.get("date")).toEqual({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    expect(types.get("radio")).toEqual({ inputValue: { radioItemSelected: expect.any(String) } });
    expect(types.get("checklist")).toEqual({
      inputValue: { itemsChecked: expect.any(Array), itemsNotChecked: expect.any(Array) },
    });
  });

  it("steps_time_frame=true adds completed_time to every step (null when not completed)", async () => {
    const inst = sb.store.list(1043).find((i) => i.stepCompletedTimes.size === 1 && statusOf(i) === "running");
    if (!inst) throw new Error("fixture");
    const r = (await call<InstanceRecord>(sb, `/instances/${inst.id}/?steps_time_frame=true`)).body;
    for (const s of r.process_snapshot.steps) {
      expect(s.completed_time).toBe(iso(inst.stepCompletedTimes.get(s.id) ?? null));
      expect(Object.keys(s)).toEqual(["id", "name", "position", "type", "completed_time", "actions"]);
    }
  });

  it("completed and aborted instances carry their times and no active steps", async () => {
    const completed = sb.store.list().find((i) => statusOf(i) === "completed");
    const aborted = sb.store.list().find((i) => statusOf(i) === "aborted");
    const c = (await call<InstanceRecord>(sb, `/instances/${completed?.id}/`)).body;
    const a = (await call<InstanceRecord>(sb, `/instances/${aborted?.id}/`)).body;
    expect(c.completed_time).toBe(iso(completed?.completedTime ?? null));
    expect(c.completed_time).not.toBeNull();
    expect(c.active_step_ids).toEqual([]);
    expect(a.aborted_time).not.toBeNull();
    expect(a.active_step_ids).toEqual([]);
    expect(a.step_deadlines).toEqual([]);
  });

  it("unknown ids are 404 JSON", async () => {
    const res = await call<{ detail: string }>(sb, "/instances/99/");
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/99/);
    expect((await call(sb, "/instances/abc/")).status).toBe(404);
  });
});
