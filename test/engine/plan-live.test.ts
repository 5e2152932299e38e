/**
 * The live pipeline against the sandbox over HTTP: what is planned matches the sandbox's data, and the requests made
 * are exactly the ones the cost model promises (counted in the sandbox's request log).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import type { InstanceState } from "../../src/sandbox/index.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { loadRules } from "../../src/rules/index.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");
let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 3000, seed: 7, now: NOW });
});
afterAll(async () => {
  await sb.close();
});

function client() {
  return createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
}

function plain(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return v;
  const o = v as { inputValue?: unknown };
  const iv = o.inputValue;
  if (typeof iv === "object" && iv !== null && "radioItemSelected" in iv)
    return (iv as { radioItemSelected: unknown }).radioItemSelected;
  return iv;
}

const running = (i: InstanceState) => i.completedTime === null && i.abortedTime === null;

/** Requests by kind in the sandbox log since the last clear. */
function counts() {
  const log = sb.requests();
  // reading a workflow's structure: a list of its newest instance (page_size=1), then one read of that instance
  const structure = log.filter(
    (r) => r.method === "GET" && r.path.includes("/v2/processes/") && r.query.page_size === "1",
  ).length;
  return {
    total: log.length,
    structure,
    lists: log.filter((r) => r.method === "GET" && r.path.includes("/v2/processes/")).length - structure,
    fields: log.filter((r) => r.method === "GET" && /\/steps\/\d+\/actions\/\d+\/$/.test(r.path)).length,
    reads: log.filter((r) => r.method === "GET" && /^\/api\/instances\/\d+\/$/.test(r.path)).length - structure,
    processes: log.filter((r) => r.path === "/api/processes/").length,
    mutations: log.filter((r) => r.method !== "GET").length,
  };
}

const TWO_FIELDS = `
version: 1
rules:
  - name: small-eur
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      currency: { step: 20111, action: 50223 }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step:
          step: 20111
          inputs: [ { action: 50230, value: { inputValue: "ok" } } ]
`;

describe("plan against the sandbox", () => {
  it("plans exactly the instances the sandbox data says match", async () => {
    const rs = await rulesFromYaml(TWO_FIELDS);
    const c = client();
    const plan = await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    const expected = sb.store
      .list(1042)
      .filter((i) => running(i) && i.activeStepIds.includes(20111))
      .filter((i) => {
        const amount = plain(i.values.get(50222));
        return typeof amount === "number" && amount < 100 && plain(i.values.get(50223)) === "EUR";
      })
      .map((i) => i.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(plan.changes.map((ch) => ch.instance_id)).toEqual(expected);
    expect(plan.errors).toEqual([]);
  });

  it("reads two fields in bulk: ceil(N/500) list pages + 2·ceil(N/500) form-field pages, no instance reads", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: big-usd
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      currency: { step: 20111, action: 50223 }
    select: { status: [running] }
    when: fields.amount > 1500 and fields.currency = "USD"
    actions: [abort]
`);
    const n = sb.store.list(1042).filter(running).length;
    expect(n).toBeGreaterThan(500);
    sb.clearRequests();
    const c = client();
    const plan = await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    const pages = Math.ceil(n / 500);
    expect(plan.rules[0]?.selected).toBe(n);
    expect(counts()).toMatchObject({
      structure: 1,
      lists: pages,
      fields: 2 * pages,
      reads: 0,
      processes: 0,
      mutations: 0,
    });
    // plus two requests for the workflow's structure (its fields are checked before any selection)
    expect(counts().total).toBe(3 * pages + 2);
    expect(plan.summary.requests).toBe(3 * pages + 2);
  });

  it("reads each instance once when the rule needs the full record, and no field pages", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: urgent-small
    workflow: 1045
    fields: { risk: { step: 20141, action: 50272 } }
    select: { status: [running], active_step_id: 20141 }
    when: '"urgent" in tags and fields.risk > 5'
    actions: [ { report: { group_by: priority } } ]
`);
    const n = sb.store.list(1045).filter((i) => running(i) && i.activeStepIds.includes(20141)).length;
    sb.clearRequests();
    const c = client();
    await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    expect(counts()).toMatchObject({ structure: 1, lists: Math.ceil(n / 500), reads: n, fields: 0, mutations: 0 });
  });

  it("learns which instances have the acted-on step active from a filtered list, not from instance reads", async () => {
    const rs = await rulesFromYaml(
      TWO_FIELDS.replace("select: { status: [running], active_step_id: 20111 }", "select: { status: [running] }"),
    );
    const all = sb.store.list(1042).filter(running);
    const active = all.filter((i) => i.activeStepIds.includes(20111));
    sb.clearRequests();
    const c = client();
    const plan = await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    const pages = Math.ceil(all.length / 500);
    expect(counts()).toMatchObject({
      structure: 1,
      lists: pages + Math.ceil(active.length / 500),
      fields: 2 * pages,
      reads: 0,
    });
    const activeIds = new Set(active.map((i) => i.id));
    expect(plan.changes.length).toBeGreaterThan(0);
    expect(plan.changes.every((ch) => activeIds.has(ch.instance_id))).toBe(true);
    // matched instances waiting on another step are shown as skipped, not planned
    expect(plan.rules[0]!.skipped).toBe(plan.rules[0]!.matched - plan.changes.length);
    expect(plan.rules[0]!.skipped).toBeGreaterThan(0);
  });

  it("fetches shared field values once however many rules read them", async () => {
    const second = TWO_FIELDS.replace("name: small-eur", "name: large-eur")
      .replace("fields.amount < 100", "fields.amount >= 1000")
      .replace("complete_step", "save_step")
      .replace(/version: 1\nrules:\n/, "");
    const rs = await rulesFromYaml(`${TWO_FIELDS}${second}`);
    const n = sb.store.list(1042).filter((i) => running(i) && i.activeStepIds.includes(20111)).length;
    sb.clearRequests();
    const c = client();
    const plan = await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    const pages = Math.ceil(n / 500);
    // one list for the selection both rules share; the second rule reads only the field its save writes (to leave
    // out saves that already hold); the workflow's structure is read once for both rules
    expect(counts()).toMatchObject({ structure: 1, lists: pages, fields: 3 * pages, reads: 0 });
    expect(plan.rules.map((r) => r.name)).toEqual(["small-eur", "large-eur"]);
    expect(plan.summary.save_step).toBeGreaterThan(0);
  });

  it("makes no request beyond the list for a rule that needs only the list element", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: abort-old
    workflow: { name: Employee onboarding }
    select: { status: [running], started_time_before: -P60D }
    when: instance.status = "running" and $contains(instance.name, "onboarding")
    actions: [abort]
`);
    const cutoff = NOW.getTime() - 60 * 86_400_000;
    const expected = sb.store
      .list(1043)
      .filter((i) => running(i) && i.startedTime < cutoff)
      .map((i) => i.id);
    sb.clearRequests();
    const c = client();
    const plan = await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    // a rule naming no step or field reads no structure
    expect(counts()).toMatchObject({
      processes: 1,
      structure: 0,
      lists: Math.max(1, Math.ceil(expected.length / 500)),
      fields: 0,
      reads: 0,
    });
    expect(plan.changes.map((ch) => ch.instance_id)).toEqual(expected);
    expect(plan.rules[0]).toMatchObject({ workflow_id: 1043, workflow_name: "Employee onboarding" });
  });

  it("names the closest visible workflows when a name is unknown, and still plans the other rules", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - { name: typo, workflow: { name: Employe onboardin }, actions: [abort] }
  - { name: fine, workflow: 1044, select: { status: [completed] }, actions: [ { report: { group_by: status } } ] }
`);
    const c = client();
    const plan = await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    expect(plan.errors).toHaveLength(1);
    expect(plan.errors[0]?.message).toContain('no workflow named "Employe onboardin"');
    expect(plan.errors[0]?.message).toContain('"Employee onboarding"');
    expect(plan.reports[0]?.groups).toEqual([
      expect.objectContaining({
        key: "completed",
        count: sb.store.list(1044).filter((i) => i.completedTime !== null && i.abortedTime === null).length,
      }),
    ]);
  });

  it("fails a rule whose workflow the key cannot see with the API's status, and goes on", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - { name: hidden, workflow: 1044, actions: [abort] }
`);
    const c = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-outsider", rateLimitPerMin: 0 });
    const plan = await runPlan({ client: c, ruleSet: rs, now: NOW });
    await c.close();
    expect(plan.errors[0]).toMatchObject({ code: "api", rule: "hidden" });
    expect(plan.errors[0]?.message).toMatch(/listing instances of workflow 1044, page 1: 404/);
    expect(plan.errors[0]?.message).not.toContain("sandbox-outsider");
    expect(plan.changes).toEqual([]);
  });

  it("plans the starter rules in rules/ against the default demo data without errors", async () => {
    const result = await loadRules(["rules/"]);
    expect(result.ruleSet).toBeDefined();
    const demo = await startSandbox({ port: 0, now: NOW });
    const c = createClient({ baseUrl: demo.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    const plan = await runPlan({ client: c, ruleSet: result.ruleSet!, now: NOW });
    await c.close();
    await demo.close();
    expect(plan.errors).toEqual([]);
    expect(plan.rules.length).toBe(result.ruleSet!.rules.length);
    expect(plan.changes.length).toBeGreaterThan(0);
    expect(plan.reports.length).toBeGreaterThan(0);
  });
});
