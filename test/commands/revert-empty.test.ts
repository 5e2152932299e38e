/**
 * `flowrules revert` on fields that were empty before the rule wrote them (docs/forecast.md, "Revert"): cleared only
 * where the service takes an empty value for the field's type. Against the sandbox, each of the five documented types
 * (text, number, date, radio, checklist) is emptied by the revert: the record holds no value for it and the form-field
 * listing leaves the instance out. Behind a service that does not say a field's type, the same fields are listed as not
 * reversible and nothing is sent for them.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { isRecord } from "../../src/model/guards.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { startHostileProxy, type HostileProxy } from "../hardening/hostile-proxy.js";

/** One save per step, each writing fields of every documented type; `id` keeps it to the instances prepared below. */
const rules = (ids: { expense: number; onboarding: number }): string => `version: 1
rules:
  - name: fill-expense
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    exclude: { instance_ids: [${EXPENSES.filter((i) => i !== ids.expense).join(", ")}] }
    actions:
      - save_step:
          step: 20111
          inputs:
            - { action: 50222, value: { inputValue: 42 } }
            - { action: 50223, value: { inputValue: { radioItemSelected: EUR } } }
            - { action: 50230, value: { inputValue: "filled by a rule" } }
            - { action: 50231, value: { date: "2026-12-01T09:00:00Z" } }
  - name: fill-onboarding
    workflow: 1043
    select: { status: [running], active_step_id: 20121 }
    exclude: { instance_ids: [${ONBOARDINGS.filter((i) => i !== ids.onboarding).join(", ")}] }
    actions:
      - save_step:
          step: 20121
          inputs:
            - { action: 50252, value: { inputValue: { itemsChecked: [Laptop], itemsNotChecked: [Phone, Badge] } } }
`;

let EXPENSES: number[] = [];
let ONBOARDINGS: number[] = [];
let sb: RunningSandbox;
let proxy: HostileProxy;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 200, seed: 5 });
  proxy = await startHostileProxy(new URL(sb.baseUrl).origin);
  dir = await tempDir("flowrules-revert-empty-");
  const running = (processId: number, step: number): number[] =>
    sb.store
      .peekProcess(processId)
      .filter((i) => i.completedTime === null && i.abortedTime === null && i.activeStepIds.includes(step))
      .map((i) => i.id);
  EXPENSES = running(1042, 20111);
  ONBOARDINGS = running(1043, 20121);
});
afterAll(async () => {
  await proxy.close();
  await sb.close();
});

const FIELDS: Array<{ processId: number; step: number; action: number; type: string }> = [
  { processId: 1042, step: 20111, action: 50222, type: "number" },
  { processId: 1042, step: 20111, action: 50223, type: "radio" },
  { processId: 1042, step: 20111, action: 50230, type: "text" },
  { processId: 1042, step: 20111, action: 50231, type: "date" },
  { processId: 1043, step: 20121, action: 50252, type: "checklist" },
];

/** Empties every field of the test on an instance, as if nobody had filled them yet. */
function emptied(id: number, actions: number[]): void {
  for (const a of actions) sb.store.setValue(id, a, undefined);
}

/** The instance's value of a field as the form-field listing (4.6) gives it; undefined when it lists none. */
async function listed(f: (typeof FIELDS)[number], id: number): Promise<unknown> {
  const url = `${sb.baseUrl}/processes/${f.processId}/steps/${f.step}/actions/${f.action}/?instance_ids=${id}`;
  const res = await fetch(url, { headers: { Authorization: "Api-Key sandbox-admin" } });
  const body = (await res.json()) as { results: Array<{ instance_id: number; value: unknown }> };
  return body.results.find((r) => r.instance_id === id)?.value;
}

interface RevertPlan {
  changes: Array<{ instance_id: number; request: { body: { actions: Array<{ action_id: number }> } } }>;
  revert: { not_reversible: Array<{ instance_id: number; field?: string; reason: string }> };
}

async function planApplyRevert(baseUrl: string, name: string, ids: { expense: number; onboarding: number }) {
  const env = { FLOWRULES_BASE_URL: baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, rules(ids));
  const plan = join(dir, `${name}.json`);
  const planned = await runCli(["plan", file, "--out", plan, "-q"], env);
  expect(planned.code, planned.stderr).toBe(0);
  const applied = await runCli(["apply", plan, "-q"], env);
  expect(applied.code, applied.stderr).toBe(0);
  for (const f of FIELDS) expect(await listed(f, f.processId === 1042 ? ids.expense : ids.onboarding)).toBeDefined();
  const undo = join(dir, `${name}-undo.json`);
  const reverted = await runCli(["revert", plan, "--out", undo, "-q"], env);
  expect(reverted.code, reverted.stderr).toBe(0);
  const revert = JSON.parse(await readFile(undo, "utf8")) as RevertPlan;
  const apply = await runCli(["apply", undo, "-q"], env);
  expect(apply.code, apply.stderr).toBe(0);
  return revert;
}

describe("flowrules revert, a field empty before the rule wrote it", () => {
  it("is emptied for each documented type: the record holds no value and the form-field listing leaves it out", async () => {
    const ids = { expense: EXPENSES[0] ?? 0, onboarding: ONBOARDINGS[0] ?? 0 };
    expect(ids.expense * ids.onboarding).toBeGreaterThan(0);
    emptied(ids.expense, [50222, 50223, 50230, 50231]);
    emptied(ids.onboarding, [50252]);
    const revert = await planApplyRevert(sb.baseUrl, "typed", ids);
    expect(revert.revert.not_reversible).toEqual([]);
    expect(revert.changes.map((c) => c.instance_id).sort()).toEqual([ids.expense, ids.onboarding].sort());
    for (const f of FIELDS) {
      const id = f.processId === 1042 ? ids.expense : ids.onboarding;
      expect(sb.store.peek(id)?.values.has(f.action), `${f.type} field in the record`).toBe(false);
      expect(await listed(f, id), `${f.type} field in the form-field listing`).toBeUndefined();
    }
  });

  it("is listed as not reversible, and left as written, where the service does not say the field's type", async () => {
    // the same service, answering without any field's type (snapshot actions and form-field records alike)
    proxy.setRule(() => ({ answer: (up) => ({ ...up, body: withoutTypes(up.body) }) }));
    const ids = { expense: EXPENSES[1] ?? 0, onboarding: ONBOARDINGS[1] ?? 0 };
    expect(ids.expense * ids.onboarding).toBeGreaterThan(0);
    emptied(ids.expense, [50222, 50223, 50230, 50231]);
    emptied(ids.onboarding, [50252]);
    const revert = await planApplyRevert(proxy.baseUrl, "untyped", ids);
    expect(revert.changes).toEqual([]);
    expect(revert.revert.not_reversible.map((n) => `${n.instance_id}:${n.field}`).sort()).toEqual(
      FIELDS.map((f) => `${f.processId === 1042 ? ids.expense : ids.onboarding}:action ${f.action}`).sort(),
    );
    for (const n of revert.revert.not_reversible) expect(n.reason).toMatch(/empty before.*type/);
    for (const f of FIELDS)
      expect(sb.store.peek(f.processId === 1042 ? ids.expense : ids.onboarding)?.values.has(f.action)).toBe(true);
  });
});

/** A JSON answer with every `type` and `settings` of form fields taken out. */
function withoutTypes(body: string): string {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return body;
  }
  // a form field is an element of a step's `actions`; `settings` carries the type in form-field records
  const strip = (v: unknown, field = false): unknown => {
    if (Array.isArray(v)) return v.map((x) => strip(x, field));
    if (!isRecord(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === "settings" || (field && k === "type")) continue;
      out[k] = strip(x, k === "actions");
    }
    return out;
  };
  return JSON.stringify(strip(json));
}
