/**
 * Issue 25's two defects, against the sandbox over loopback HTTP:
 * - changes people made a moment before a plan are applied by `apply --auto-approve`, not skipped as stale (the plan
 *   records what it saw of each instance: src/engine/seen.ts);
 * - one process, one key, one budget: planning, applying and retries share one rate limiter, so a service enforcing
 *   exactly the limit flowrules was given answers no 429.
 */
import { afterEach, describe, expect, it } from "vitest";
import { rm } from "node:fs/promises";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { join } from "node:path";
import { planRuleSet } from "../../src/commands/plan.js";
import { writePlanFile } from "../../src/plan/write.js";
import { loadRules } from "../../src/rules/index.js";
import type { Plan } from "../../src/plan/types.js";
import { captureIO, changeKey, connection, effectiveMutations, runApply, tempDir, writeRules } from "./helpers.js";
import { APPROVE_RULES } from "../helpers/rules.js";

let sb: RunningSandbox | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** As `plan --out` does: the plan records what it saw of each instance it changes. */
async function makePlan(s: RunningSandbox, dir: string, yaml: string): Promise<{ file: string; plan: Plan }> {
  const loaded = await loadRules([await writeRules(dir, yaml)]);
  if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => d.message).join("\n"));
  const plan = await planRuleSet(loaded.ruleSet, connection(s), captureIO(), { quiet: true, recordSeen: true });
  expect(plan.errors).toEqual([]);
  const file = join(dir, "plan.json");
  await writePlanFile(file, plan);
  return { file, plan };
}

/** A person completes step `step` of instance `id` through the API, as the product would. */
async function personCompletes(s: RunningSandbox, id: number, step: number): Promise<void> {
  const res = await fetch(`${s.baseUrl}/instances/${id}/complete_step/`, {
    method: "POST",
    headers: { authorization: "Api-Key sandbox-admin", "content-type": "application/json" },
    body: JSON.stringify({ step_id: step, actions: [], mode: "complete" }),
  });
  expect(res.status).toBe(200);
}

function running(s: RunningSandbox, processId: number, step: number): number[] {
  return s.store
    .list(processId)
    .filter((i) => i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(step))
    .map((i) => i.id);
}

describe("fresh changes are not stale", () => {
  it("apply --auto-approve right after people completed the step before an approval applies the approvals", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 5 });
    const dir = await tempDir();
    dirs.push(dir);
    const submitted = running(sb, 1042, 20110).slice(0, 5);
    expect(submitted.length).toBe(5);
    for (const id of submitted) await personCompletes(sb, id, 20110);
    for (const id of submitted) expect(sb.store.peek(id)?.activeStepIds).toContain(20111);

    const rules = await writeRules(dir, APPROVE_RULES);
    sb.clearRequests();
    const io = captureIO();
    const code = await runApply(sb, dir, { paths: [rules], autoApprove: true }, io);
    expect(io.out()).not.toMatch(/stale/);
    expect(code).toBe(2);
    const counts = effectiveMutations(sb);
    for (const id of submitted) expect(counts.get(`complete_step:${id}:20111`), `instance ${id}`).toBe(1);
    for (const id of submitted) expect(sb.store.peek(id)?.activeStepIds).not.toContain(20111);
  });

  it("a saved plan records what it saw: a fresh instance carries its last_updated_time, the others a bound", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 5 });
    const dir = await tempDir();
    dirs.push(dir);
    const [fresh] = running(sb, 1042, 20110);
    if (fresh === undefined) throw new Error("no candidate");
    await personCompletes(sb, fresh, 20110);
    const { plan } = await makePlan(sb, dir, APPROVE_RULES);
    const freshChange = plan.changes.find((c) => c.instance_id === fresh);
    expect(freshChange?.precondition.last_updated_time).toBeDefined();
    expect(Date.parse(freshChange?.precondition.last_updated_time ?? "")).toBe(sb.store.peek(fresh)?.lastUpdatedTime);
    const others = plan.changes.filter((c) => c.instance_id !== fresh);
    expect(others.length).toBeGreaterThan(0);
    for (const c of others) {
      // the bound lies before the plan's start, and the instance was last updated before it
      const bound = Date.parse(c.precondition.last_updated_before ?? "");
      expect(bound).toBeLessThan(Date.parse(plan.created_at));
      expect(sb.store.peek(c.instance_id)?.lastUpdatedTime ?? 0).toBeLessThan(bound);
    }
  });

  it("an instance edited after the plan saw it is still refused as stale; the fresh one planned just before is not", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 5 });
    const dir = await tempDir();
    dirs.push(dir);
    const [fresh] = running(sb, 1042, 20110);
    if (fresh === undefined) throw new Error("no candidate");
    await personCompletes(sb, fresh, 20110);
    const { file, plan } = await makePlan(sb, dir, APPROVE_RULES);
    const edited = plan.changes.find((c) => c.instance_id !== fresh);
    if (!edited) throw new Error("nothing else planned");
    // an edit that keeps the precondition (running, step active): the instance changed after the plan saw it
    sb.store.update(edited.instance_id, (i) => void i.tags.push("edited-after-plan"));
    const io = captureIO();
    const code = await runApply(sb, dir, { paths: [file] }, io);
    expect(code).toBe(1);
    const counts = effectiveMutations(sb);
    expect(counts.get(changeKey(edited))).toBeUndefined();
    expect(io.out()).toMatch(/Apply incomplete: \d+ changes applied, 1 stale/);
    for (const c of plan.changes) if (c.id !== edited.id) expect(counts.get(changeKey(c)), c.id).toBe(1);
  });
});

describe("a plan of fresh changes only", () => {
  it("is judged without the staleness list (it would name each one): the one edited since is stale, the rest applied", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 7 });
    const dir = await tempDir();
    dirs.push(dir);
    // people just tagged these claims waiting for approval: each updated a moment before the plan
    const picked = running(sb, 1042, 20111).slice(0, 4);
    expect(picked.length).toBe(4);
    for (const id of picked) sb.store.update(id, (i) => void i.tags.push("fresh-batch"));
    const { file, plan } = await makePlan(
      sb,
      dir,
      APPROVE_RULES.replace("active_step_id: 20111 }", "active_step_id: 20111, tags: [fresh-batch] }"),
    );
    expect(plan.changes.map((c) => c.instance_id).sort()).toEqual([...picked].sort());
    for (const c of plan.changes) expect(c.precondition.last_updated_time, c.id).toBeDefined();
    // the list from created_at less the skew would name each one: whoever changes one after the plan is still caught
    const [edited, ...others] = plan.changes;
    if (!edited) throw new Error("nothing planned");
    sb.store.update(edited.instance_id, (i) => void i.tags.push("edited-after-plan"));
    sb.clearRequests();
    const io = captureIO();
    const code = await runApply(sb, dir, { paths: [file] }, io);
    expect(code).toBe(1);
    const counts = effectiveMutations(sb);
    expect(counts.get(changeKey(edited))).toBeUndefined();
    for (const c of others) expect(counts.get(changeKey(c)), c.id).toBe(1);
    expect(io.out()).toMatch(/Apply incomplete: 3 changes applied, 1 stale/);
    // each planned instance read once to judge it; no list asked
    const gets = sb.requests().filter((r) => r.method === "GET");
    expect(gets.filter((r) => r.path.includes("/v2/processes/"))).toEqual([]);
    expect(gets.map((r) => r.path).sort()).toEqual(picked.map((id) => `/api/instances/${id}/`).sort());
  });
});

describe("one process, one budget", () => {
  it("apply --auto-approve with the service's limit meets no 429: planning and applying share one limiter", async () => {
    // 100 requests per 3 s window on both sides (the minute scaled down, as test/api/rate-limit-http.test.ts does)
    const windowMs = 3000;
    sb = await startSandbox({ port: 0, instances: 400, seed: 5, rateLimitPerMin: 100, rateLimitWindowMs: windowMs });
    const dir = await tempDir();
    dirs.push(dir);
    // reading records makes planning spend about as many requests as applying
    const rules = await writeRules(
      dir,
      APPROVE_RULES.replace("    actions:", `    when: instance.stage != "never-a-stage"\n    actions:`),
    );
    const candidates = running(sb, 1042, 20111).length;
    expect(candidates).toBeGreaterThan(40);
    const io = captureIO();
    const code = await runApply(
      sb,
      dir,
      {
        paths: [rules],
        autoApprove: true,
        connection: connection(sb, { rateLimitPerMin: 100 }),
        tuning: { client: { rateLimitWindowMs: windowMs } },
      },
      io,
    );
    expect(code).toBe(2);
    const log = sb.requests();
    expect(log.length).toBeGreaterThan(100);
    expect(log.filter((r) => r.status === 429)).toEqual([]);
    expect([...effectiveMutations(sb).values()].every((n) => n === 1)).toBe(true);
    expect(effectiveMutations(sb).size).toBe(candidates);
  });
});
