/**
 * The query planner for a whole rule set, against the sandbox over HTTP: requests are counted from the sandbox's
 * request log (GET /__sandbox/requests), and sharing never changes what is planned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan, type RequestChoice } from "../../src/engine/plan-live.js";
import { narrowing, planQueries, selectionId, choosePriority } from "../../src/engine/query-plan.js";
import { startSandbox, type InstanceState, type RunningSandbox } from "../../src/sandbox/index.js";
import type { Plan } from "../../src/plan/types.js";
import type { RuleSet } from "../../src/rules/types.js";
import { rulesFromYaml } from "../helpers/rules.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");
let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 4000, seed: 11, now: NOW });
});
afterAll(async () => {
  await sb.close();
});

interface Logged {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
}

async function requestLog(): Promise<Logged[]> {
  const res = await fetch(`${sb.origin}/__sandbox/requests`);
  expect(res.status).toBe(200);
  return (await res.json()) as Logged[];
}

async function counts() {
  const all = await requestLog();
  // reading a workflow's structure (plan checks rules against it) is a list of its newest instance (page_size=1),
  // then one read of that instance: counted apart from the selections' requests
  const structure = new Set<(typeof all)[number]>();
  let probing = false;
  for (const r of all) {
    if (r.path.includes("/v2/processes/") && r.query.page_size === "1" && r.query.ordering === "-started_time") {
      structure.add(r);
      probing = true;
    } else if (probing && /^\/api\/instances\/\d+\/$/.test(r.path)) {
      structure.add(r);
      probing = false;
    }
  }
  const log = all.filter((r) => !structure.has(r));
  return {
    lists: log.filter((r) => r.path.includes("/v2/processes/")),
    fields: log.filter((r) => /\/steps\/\d+\/actions\/\d+\/$/.test(r.path)),
    reads: log.filter((r) => /^\/api\/instances\/\d+\/$/.test(r.path)),
    total: log.length,
  };
}

async function plan(rs: RuleSet, onRequestChoice?: (c: RequestChoice) => void): Promise<Plan> {
  sb.clearRequests();
  const c = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  try {
    return await runPlan({ client: c, ruleSet: rs, now: NOW, ...(onRequestChoice ? { onRequestChoice } : {}) });
  } finally {
    await c.close();
  }
}

const running = (i: InstanceState) => i.completedTime === null && i.abortedTime === null;
const pages = (n: number) => Math.max(1, Math.ceil(n / 500));

describe("query planner: requests for the whole rule set", () => {
  it("lists a selection two rules share once", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - { name: a, workflow: 1042, select: { status: [running] }, actions: [ { report: { group_by: status } } ] }
  - { name: b, workflow: 1042, select: { status: running }, when: '$contains(instance.name, "a")', actions: [ { report: { group_by: status } } ] }
`);
    const n = sb.store.list(1042).filter(running).length;
    expect(n).toBeGreaterThan(500);
    const p = await plan(rs);
    const c = await counts();
    expect(c.lists.length).toBe(pages(n));
    expect(c.total).toBe(pages(n));
    expect(p.rules.map((r) => r.selected)).toEqual([n, n]);
  });

  it("filters a status subset of a listed selection from its list elements, with no list request of its own", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - { name: all, workflow: 1044, actions: [ { report: { group_by: status } } ] }
  - { name: done, workflow: 1044, select: { status: [completed] }, actions: [ { report: { group_by: status } } ] }
`);
    const all = sb.store.list(1044);
    const done = all.filter((i) => i.completedTime !== null && i.abortedTime === null);
    const p = await plan(rs);
    const c = await counts();
    expect(c.lists.length).toBe(pages(all.length));
    expect(c.lists.every((r) => r.query.status === undefined)).toBe(true);
    expect(p.reports[1]?.groups).toEqual([
      { key: "completed", count: done.length, instance_ids: done.map((i) => i.id).sort((a, b) => a - b) },
    ]);
  });

  it("filters a priority subset from the records another rule reads anyway, and lists it otherwise", async () => {
    const yaml = `
version: 1
rules:
  - name: tagged
    workflow: 1043
    select: { status: [running] }
    actions: [ { report: { group_by: tags } } ]
  - name: urgent-it
    workflow: 1043
    select: { status: [running], priority: V, active_step_id: 20121 }
    actions: [ { report: { group_by: status, columns: [id, name] } } ]
`;
    const rs = await rulesFromYaml(yaml);
    const n = sb.store.list(1043).filter(running).length;
    const expected = sb.store
      .list(1043)
      .filter((i) => running(i) && i.priority === "V" && i.activeStepIds.includes(20121))
      .map((i) => i.id)
      .sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(0);
    const choices: RequestChoice[] = [];
    const p = await plan(rs, (ch) => choices.push(ch));
    const c = await counts();
    expect(c.lists.length).toBe(pages(n));
    expect(c.reads.length).toBe(n);
    expect(p.reports[1]?.groups[0]?.instance_ids).toEqual(expected);
    expect(choices.find((ch) => ch.rules?.includes("urgent-it"))).toMatchObject({ choice: "filter", requests: 0 });

    // alone, nobody reads the records: the subset is listed by the service
    const alone = await rulesFromYaml(yaml.replace(/ {2}- name: tagged[\s\S]*?group_by: tags } } \]\n/, ""));
    expect(alone.rules.map((r) => r.name)).toEqual(["urgent-it"]);
    const q = await plan(alone);
    const c2 = await counts();
    expect(c2.lists.length).toBe(1);
    expect(c2.lists[0]?.query.priority).toBe("V");
    expect(c2.reads.length).toBe(0);
    expect(q.reports[0]).toEqual(p.reports[1]);
  });

  it("asks each field once per instance for all rules together, absent values included", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: big
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running] }
    when: fields.amount > 4000
    actions: [ { report: { group_by: status } } ]
  - name: waiting
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 }, currency: { step: 20111, action: 50223 } }
    select: { status: [running], active_step_id: 20111 }
    actions: [ { report: { group_by: currency, columns: [id, fields.amount] } } ]
  - name: done
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [completed] }
    actions: [ { report: { group_by: status, columns: [id, fields.amount] } } ]
`);
    const list = sb.store.list(1042);
    const run = list.filter(running);
    const waiting = run.filter((i) => i.activeStepIds.includes(20111));
    const done = list.filter((i) => i.completedTime !== null && i.abortedTime === null);
    await plan(rs);
    const c = await counts();
    const asked = (action: number): number[] =>
      c.fields
        .filter((r) => r.path.endsWith(`/actions/${action}/`))
        .flatMap((r) => String(r.query.instance_ids).split(",").map(Number));
    const amountIds = asked(50222);
    // every id once: no rule asks again for what another rule's page already answered (with or without a value)
    expect(new Set(amountIds).size).toBe(amountIds.length);
    expect(amountIds.length).toBe(run.length + done.length);
    expect(asked(50223).length).toBe(waiting.length);
    expect(c.fields.length).toBe(pages(run.length + done.length) + pages(waiting.length));
  });

  it("answers a priority report from filtered lists, with no record read", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: claims-by-priority
    workflow: 1042
    select: { status: [running] }
    actions: [ { report: { group_by: priority, columns: [id, name, status, priority] } } ]
`);
    const run = sb.store.list(1042).filter(running);
    const choices: RequestChoice[] = [];
    const p = await plan(rs, (ch) => choices.push(ch));
    const c = await counts();
    expect(c.reads.length).toBe(0);
    const v = run.filter((i) => i.priority === "V").length;
    const h = run.filter((i) => i.priority === "H").length;
    expect(c.lists.length).toBe(pages(run.length) + pages(v) + pages(h));
    const groups = new Map(p.reports[0]?.groups.map((g) => [g.key, g.count]));
    expect(groups).toEqual(
      new Map([
        ["Regular", run.length - v - h],
        ["H", h],
        ["V", v],
      ]),
    );
    const row = p.reports[0]?.rows.find((r) => r.id === run.find((i) => i.priority === "H")?.id);
    expect(row?.priority).toBe("H");
    expect(choices.find((ch) => ch.subject === "priority of claims-by-priority")).toMatchObject({
      choice: "priority lists",
    });
  });

  it("plans the same, rule by rule, as each rule planned alone (sharing changes requests, not plans)", async () => {
    const { MULTI_RULES_YAML } = await import("../../bench/src/multi-rule.js");
    const rs = await rulesFromYaml(MULTI_RULES_YAML);
    expect(rs.rules.length).toBeGreaterThanOrEqual(20);
    const together = await plan(rs);
    const sharedRequests = (await counts()).total;
    expect(together.errors).toEqual([]);
    let aloneRequests = 0;
    for (const rule of rs.rules) {
      const alone = await plan({ ...rs, rules: [rule] });
      aloneRequests += (await counts()).total;
      expect(together.changes.filter((ch) => ch.rule === rule.name)).toEqual(alone.changes);
      expect(together.reports.filter((r) => r.rule === rule.name)).toEqual(alone.reports);
      expect(together.rules.find((r) => r.name === rule.name)).toEqual(alone.rules[0]);
    }
    expect(sharedRequests).toBeLessThan(aloneRequests);
  });
});

describe("query planner: pure choices", () => {
  it("treats the same question written differently as one selection", () => {
    expect(selectionId(1, { status: ["running", "aborted"], tags: ["x"] })).toBe(
      selectionId(1, { tags: ["x"], status: ["aborted", "running"] }),
    );
    expect(selectionId(1, { status: ["running"] })).not.toBe(selectionId(2, { status: ["running"] }));
  });

  it("narrows only with filters it can reproduce exactly", () => {
    expect(narrowing({ status: ["running"] }, { status: ["running"], priority: "H" })).toEqual([
      { key: "priority", value: "H" },
    ]);
    expect(narrowing({ status: ["running", "completed"] }, { status: ["completed"] })).toEqual([
      { key: "status", values: ["completed"] },
    ]);
    expect(narrowing({}, { active_step_id: 7, tags: ["a"] })).toEqual([
      { key: "active_step_id", step: 7 },
      { key: "tags", tag: "a" },
    ]);
    // several tags (any or all?), names, dates: the service's own semantics
    expect(narrowing({}, { tags: ["a", "b"] })).toBeUndefined();
    expect(narrowing({}, { name: "x" })).toBeUndefined();
    expect(narrowing({ status: ["running"] }, { status: ["completed"] })).toBeUndefined();
    expect(narrowing({ name: "x" }, { status: ["running"] })).toBeUndefined();
  });

  it("filters from records only when a rule reads them anyway", () => {
    const base = { processId: 1, fields: [], probeSteps: [], priorityOnly: false };
    const reading = planQueries([
      { ...base, rule: "a", query: { status: ["running"] }, record: true },
      { ...base, rule: "b", query: { status: ["running"], priority: "H" }, record: false },
    ]);
    const b = reading.selections.get(reading.rules.get("b")?.selection ?? "");
    expect(b?.source).toMatchObject({ kind: "filter", records: true });
    const notReading = planQueries([
      { ...base, rule: "a", query: { status: ["running"] }, record: false },
      { ...base, rule: "b", query: { status: ["running"], priority: "H" }, record: false },
    ]);
    expect(notReading.selections.get(notReading.rules.get("b")?.selection ?? "")?.source).toEqual({ kind: "list" });
  });

  it("chooses priority lists only when they cost fewer requests than the reads", () => {
    expect(choosePriority(588, 588, 2).lists).toBe(true);
    expect(choosePriority(2, 2, 2).lists).toBe(false);
    expect(choosePriority(5000, 0, 2).lists).toBe(false);
  });
});
