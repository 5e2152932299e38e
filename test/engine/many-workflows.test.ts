/**
 * A rule over several workflows (`workflow:` a list, or "*"; docs/writing-rules.md): planned in each workflow with
 * requests per workflow, one result per rule; step names resolved per workflow, and with "*" a workflow the names do
 * not fit is skipped and shown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { startSandbox, WORKFLOWS, type InstanceState, type RunningSandbox } from "../../src/sandbox/index.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");
const DAY = 86_400_000;
let sb: RunningSandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 600, seed: 46, now: NOW });
});
afterAll(async () => {
  await sb.close();
});

const running = (i: InstanceState): boolean => i.completedTime === null && i.abortedTime === null;

async function plan(yaml: string) {
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  try {
    return await runPlan({ client, ruleSet: await rulesFromYaml(yaml), now: NOW });
  } finally {
    await client.close();
  }
}

/** Instance listings by workflow id in the request log (structure probes, page_size=1, left out). */
function listingsByWorkflow(): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of sb.requests()) {
    const m = /^\/api\/v2\/processes\/(\d+)\/instances\/$/.exec(r.path);
    if (!m || r.method !== "GET" || r.query.page_size === "1") continue;
    out.set(Number(m[1]), (out.get(Number(m[1])) ?? 0) + 1);
  }
  return out;
}

describe('workflow: "*"', () => {
  it("an abort rule plans every running instance older than its bound in every workflow, one listing per workflow", async () => {
    sb.clearRequests();
    const p = await plan(`
version: 1
rules:
  - name: abort-stuck
    workflow: "*"
    select: { status: [running], started_time_before: -P30D }
    actions: [ abort ]
`);
    const ids = WORKFLOWS.map((w) => w.id).sort((a, b) => a - b);
    const expected = ids
      .flatMap((id) => sb.store.list(id))
      .filter((i) => running(i) && i.startedTime < NOW.getTime() - 30 * DAY)
      .map((i) => i.id)
      .sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(0);
    expect(p.errors).toEqual([]);
    expect(p.changes.map((c) => c.instance_id).sort((a, b) => a - b)).toEqual(expected);
    // every workflow has some, and each change names its own workflow
    expect(new Set(p.changes.map((c) => c.process_id))).toEqual(new Set(ids));
    for (const c of p.changes) expect(c.process_id).toBe(sb.store.get(c.instance_id)?.processId);
    // requests stay per workflow: one listing each (fewer than 500 instances a workflow), one GET /processes/
    expect(listingsByWorkflow()).toEqual(new Map(ids.map((id) => [id, 1])));
    expect(sb.requests().filter((r) => r.path === "/api/processes/").length).toBe(1);
    // one rule in the plan, naming the workflows it was planned in
    expect(p.rules).toHaveLength(1);
    expect(p.rules[0]?.workflow_id).toBeNull();
    expect(p.rules[0]?.workflow_ids).toEqual(ids);
    expect(PLAN_FORMATS.text(p, { color: false })).toContain(`workflows ${ids.join(", ")}`);
  });

  it("a report groups instances of every workflow", async () => {
    const p = await plan(`
version: 1
rules:
  - name: running-everywhere
    workflow: "*"
    select: { status: [running] }
    actions: [ { report: { group_by: status } } ]
`);
    const all = WORKFLOWS.flatMap((w) => sb.store.list(w.id)).filter(running).length;
    expect(p.reports[0]?.groups).toEqual([expect.objectContaining({ key: "running", count: all })]);
  });

  it('a step named by name resolves per workflow; with "*" a workflow without it is skipped and shown', async () => {
    const p = await plan(`
version: 1
rules:
  - name: approve-everywhere
    workflow: "*"
    select: { status: [running], active_step_id: "Manager approval" }
    actions:
      - complete_step: { step: "Manager approval" }
`);
    expect(p.errors).toEqual([]);
    const r = p.rules[0];
    const skipped = (r?.workflows_skipped ?? []).map((s) => s.workflow_id).sort((a, b) => a - b);
    const having = WORKFLOWS.filter((w) => w.steps.some((s) => s.name === "Manager approval")).map((w) => w.id);
    expect(having.length).toBeGreaterThan(0);
    expect(skipped).toEqual(
      WORKFLOWS.map((w) => w.id)
        .filter((id) => !having.includes(id))
        .sort((a, b) => a - b),
    );
    expect(r?.workflows_skipped?.[0]?.reason).toContain('no step named "Manager approval"');
    const expected = having
      .flatMap((id) => sb.store.list(id))
      .filter(
        (i) =>
          running(i) &&
          i.activeStepIds.some((s) =>
            WORKFLOWS.some((w) => w.steps.some((st) => st.id === s && st.name === "Manager approval")),
          ),
      )
      .map((i) => i.id)
      .sort((a, b) => a - b);
    expect(p.changes.map((c) => c.instance_id).sort((a, b) => a - b)).toEqual(expected);
    expect(PLAN_FORMATS.text(p, { color: false })).toContain("skipped");
  });

  it("an explicit list where a name does not resolve is a located error", async () => {
    const p = await plan(`
version: 1
rules:
  - name: approve-listed
    workflow: [1042, 1043]
    select: { status: [running] }
    actions:
      - complete_step: { step: "Manager approval" }
`);
    expect(p.changes).toEqual([]);
    const messages = p.errors.map((e) => e.message).join("\n");
    expect(messages).toMatch(/no step named "Manager approval" in workflow 1043.*rules\.yaml:8:\d+/);
  });
});
