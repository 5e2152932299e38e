/**
 * How long a step has waited (`$waitingSince`, `$waitingDays`, `$waitingHours`; docs/writing-rules.md): an SLA rule
 * plans exactly the instances whose step became active more than its bound ago, computed here from the sandbox's own
 * data over many seeds, and only rules that call the helpers read step completion times.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox, type InstanceState, type RunningSandbox } from "../../src/sandbox/index.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { loadRules } from "../../src/rules/index.js";
import { explainRule } from "../../src/engine/explain/explain-rule.js";
import { tempDir } from "../helpers/temp.js";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

const NOW = new Date("2026-11-01T12:00:00.000Z");
const DAY = 86_400_000;

const SLA = `
version: 1
rules:
  - name: approval-sla
    workflow: 1042
    select: { status: [running] }
    when: $waitingDays("Manager approval") > 2
    actions:
      - complete_step:
          step: 20111
          inputs: [ { action: 50230, value: { inputValue: "waited {{ $round($waitingHours(), 1) }} hours" } } ]
`;

/** A bound that splits the demo data (most approvals have waited for weeks). */
const LONG = `
  - name: approval-long
    workflow: 1042
    select: { status: [running] }
    when: $waitingHours("Manager approval") > 60 * 24
    actions: [ { report: { group_by: status } } ]
`;

const running = (i: InstanceState): boolean => i.completedTime === null && i.abortedTime === null;

/** When "Manager approval" (20111) became active, from the sandbox's data: "Submit claim" (20110) completed. */
function approvalActiveSince(i: InstanceState): number | undefined {
  if (!running(i) || !i.activeStepIds.includes(20111)) return undefined;
  return i.stepCompletedTimes.get(20110) ?? i.startedTime;
}

describe("waiting time against the sandbox", () => {
  for (const seed of [1, 2, 3, 5, 8, 13, 21, 34]) {
    it(`seed ${seed}: plans exactly the instances waiting on Manager approval for more than 2 days`, async () => {
      const sb = await startSandbox({ port: 0, instances: 300, seed, now: NOW });
      try {
        const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
        const plan = await runPlan({ client, ruleSet: await rulesFromYaml(SLA + LONG), now: NOW });
        await client.close();
        const waitedMore = (days: number): number[] =>
          sb.store
            .list(1042)
            .filter((i) => {
              const since = approvalActiveSince(i);
              return since !== undefined && NOW.getTime() - since > days * DAY;
            })
            .map((i) => i.id)
            .sort((a, b) => a - b);
        // the bound decides: some instances at the step waited longer, some not
        const atStep = sb.store.list(1042).filter((i) => approvalActiveSince(i) !== undefined).length;
        const long = waitedMore(60);
        expect(long.length).toBeGreaterThan(0);
        expect(long.length).toBeLessThan(atStep);
        const reported = (plan.reports[0]?.groups ?? []).flatMap((g) => g.instance_ids).sort((a, b) => a - b);
        expect(reported).toEqual(long);
        const planned = plan.changes.map((c) => c.instance_id).sort((a, b) => a - b);
        expect(planned).toEqual(waitedMore(2));
        // the templated value carries the hours waited, as the sandbox's data says
        for (const c of plan.changes) {
          const inst = sb.store.get(c.instance_id);
          const since = inst ? approvalActiveSince(inst) : undefined;
          expect(since).toBeDefined();
          const hours = Math.round(((NOW.getTime() - (since ?? 0)) / 3_600_000) * 10) / 10;
          expect(JSON.stringify(c.request.body)).toContain(`waited ${hours} hours`);
        }
        // each selected instance read once, with completion times (the structure probe reads one more, without)
        const timed = sb
          .requests()
          .filter(
            (r) =>
              r.method === "GET" && /^\/api\/instances\/\d+\/$/.test(r.path) && r.query.steps_time_frame === "true",
          );
        const selected = sb.store
          .list(1042)
          .filter(running)
          .map((i) => `/api/instances/${i.id}/`)
          .sort();
        expect(timed.map((r) => r.path).sort()).toEqual(selected);
      } finally {
        await sb.close();
      }
    });
  }
});

describe("waiting helpers", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 200, seed: 4, now: NOW });
  });
  afterAll(async () => {
    await sb.close();
  });

  it("a rule that does not call them reads no completion times", async () => {
    sb.clearRequests();
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: old
    workflow: 1042
    select: { status: [running] }
    when: instance.priority = "H"
    actions: [ abort ]
`);
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    await runPlan({ client, ruleSet: rs, now: NOW });
    await client.close();
    const reads = sb.requests().filter((r) => r.method === "GET" && /^\/api\/instances\/\d+\/$/.test(r.path));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.some((r) => r.query.steps_time_frame === "true")).toBe(false);
  });

  it("absent for a step that is not active; the first active step without an argument; explain shows the values", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: sla
    workflow: 1042
    select: { status: [running] }
    when: $waitingDays("Finance review") > 0 or $waitingHours(20111) > 0 or $exists($waitingSince())
    actions: [ { report: { group_by: status } } ]
`);
    const rule = rs.rules[0];
    if (!rule) throw new Error("no rule");
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    const inst = sb.store.list(1042).find((i) => running(i) && i.activeStepIds.includes(20111));
    if (!inst) throw new Error("no instance at Manager approval");
    const record = await client.getInstance(inst.id, { injectValues: true, stepsTimeFrame: true });
    await client.close();
    const data = {
      id: inst.id,
      name: inst.name,
      status: "running" as const,
      process_id: 1042,
      record,
      values: new Map(),
    };
    const e = await explainRule(rule, data, { now: NOW, workflowId: 1042 });
    const since = inst.stepCompletedTimes.get(20110) ?? inst.startedTime;
    expect(e.waiting).toEqual([
      { step: "Finance review" },
      {
        step: 20111,
        since: new Date(since).toISOString(),
        days: (NOW.getTime() - since) / DAY,
        hours: (NOW.getTime() - since) / 3_600_000,
      },
      {
        step: null,
        since: new Date(since).toISOString(),
        days: (NOW.getTime() - since) / DAY,
        hours: (NOW.getTime() - since) / 3_600_000,
      },
    ]);
    expect(e.matched).toBe(true);
  });

  it("a step name the workflow does not have is a located error once the workflow is known", async () => {
    const dir = await tempDir();
    const file = join(dir, "sla.yaml");
    await writeFile(file, SLA.replace('"Manager approval"', '"Manager aproval"'));
    const loaded = await loadRules([file]);
    const rs = loaded.ruleSet;
    if (!rs) throw new Error(JSON.stringify(loaded.diagnostics));
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    const plan = await runPlan({ client, ruleSet: rs, now: NOW });
    await client.close();
    expect(plan.changes).toEqual([]);
    const msg = plan.errors?.map((e) => e.message).join("\n") ?? "";
    expect(msg).toMatch(/no step named "Manager aproval".*Manager approval/);
    expect(msg).toContain(`${file}:7:24`);
  });
});
