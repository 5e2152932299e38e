/**
 * Gradual rollout (`limits.max_changes_per_run`; docs/writing-rules.md): at most N changes of a rule per run, oldest
 * started_time first (ties by id), the rest shown as deferred in every view and applied by later runs; max_instances
 * stays the stop.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, effectiveMutations, posts, runApply, tempDir, writeRules } from "../apply/helpers.js";
import { rolloutSplit } from "../../src/engine/assemble.js";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { rulesFromYaml } from "../helpers/rules.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import type { PlannedChange } from "../../src/plan/types.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const NOW = new Date("2026-11-01T12:00:00.000Z");

function rule(ids: number[], extra = ""): string {
  return `
version: 1
rules:
  - name: abort-stuck
    workflow: 1043
    select: { status: [running] }
    when: instance.id in [${ids.join(", ")}]
    actions: [ abort ]
    limits: { max_changes_per_run: 20${extra} }
`;
}

/** 82 running onboardings of the sandbox, and their order: oldest started_time first, ties by id. */
function eightyTwo(s: RunningSandbox): { ids: number[]; order: number[] } {
  const running = s.store.list(1043).filter((i) => i.completedTime === null && i.abortedTime === null);
  expect(running.length).toBeGreaterThanOrEqual(82);
  const chosen = running.slice(0, 82);
  const order = [...chosen].sort((a, b) => a.startedTime - b.startedTime || a.id - b.id).map((i) => i.id);
  return { ids: chosen.map((i) => i.id), order };
}

describe("max_changes_per_run", () => {
  it("a rule matching 82 with a limit of 20 applies 20, 20, 20, 20, 2 over five runs, oldest first, none twice", async () => {
    sb = await startSandbox({ port: 0, instances: 1000, seed: 44 });
    const { ids, order } = eightyTwo(sb);
    const dir = await tempDir();
    const file = await writeRules(dir, rule(ids));
    const perRun: number[][] = [];
    for (let run = 0; run < 6; run++) {
      sb.clearRequests();
      const io = captureIO();
      const code = await runApply(sb, dir, { paths: [file], autoApprove: true }, io);
      expect(code, io.err()).toBe(run < 5 ? 2 : 0);
      const aborted = posts(sb).flatMap((r) =>
        r.path.endsWith("/instances/bulk/abort") ? ((r.body as { ids?: number[] }).ids ?? []) : [],
      );
      perRun.push(aborted);
      if (run < 4)
        expect(io.err()).toContain(`${62 - 20 * run} deferred by the rollout limit (20 of ${82 - 20 * run} this run)`);
      // exactly once: no id sent in two requests that took effect, within a run
      for (const n of effectiveMutations(sb).values()) expect(n).toBe(1);
    }
    expect(perRun.map((r) => r.length)).toEqual([20, 20, 20, 20, 2, 0]);
    const all = perRun.flat();
    expect(new Set(all).size).toBe(82);
    // the oldest first: each run takes the next 20 of the order
    perRun
      .slice(0, 5)
      .forEach((r, k) =>
        expect([...r].sort((a, b) => a - b)).toEqual(order.slice(20 * k, 20 * k + 20).sort((a, b) => a - b)),
      );
  });

  it("every plan view shows the deferred changes; the JSON plan names them; max_instances stays the stop", async () => {
    sb = await startSandbox({ port: 0, instances: 1000, seed: 45, now: NOW });
    const { ids, order } = eightyTwo(sb);
    const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    const plan = await runPlan({ client, ruleSet: await rulesFromYaml(rule(ids)), now: NOW });
    const r = plan.rules[0];
    expect(r?.changes).toBe(20);
    expect(r?.deferred).toBe(62);
    expect(r?.max_changes_per_run).toBe(20);
    expect(r?.deferred_ids).toEqual(order.slice(20).sort((a, b) => a - b));
    const words = "62 deferred by the rollout limit (20 of 82 this run)";
    for (const format of ["text", "markdown", "html"] as const) {
      expect(PLAN_FORMATS[format](plan, { color: false }), format).toContain(words);
    }
    // the same order when the rule reads the records (their started_time) instead of an ordered listing
    const viaRecords = await runPlan({
      client,
      ruleSet: await rulesFromYaml(
        rule(ids).replace("when: instance.id in", "when: $exists(instance.started_time) and instance.id in"),
      ),
      now: NOW,
    });
    expect(viaRecords.rules[0]?.deferred_ids).toEqual(r?.deferred_ids);
    expect(viaRecords.changes.map((c) => c.instance_id)).toEqual(plan.changes.map((c) => c.instance_id));
    // above max_instances the rule plans nothing, whatever its rollout limit
    const stopped = await runPlan({ client, ruleSet: await rulesFromYaml(rule(ids, ", max_instances: 50")), now: NOW });
    await client.close();
    expect(stopped.changes).toEqual([]);
    expect(stopped.errors.map((e) => e.code)).toEqual(["limit"]);
  });

  it("keeps an instance's changes together, oldest first, ties by id, unknown starts last", () => {
    const change = (id: number, step: number): PlannedChange =>
      ({
        id: `${id}:${step}`,
        rule: "r",
        instance_id: id,
        instance_name: "",
        process_id: 1,
        kind: "complete_step",
        step_id: step,
        request: { method: "POST", path: "/", body: {} },
        before: {},
        after: {},
        precondition: { status: "running" },
      }) as PlannedChange;
    const changes = [change(5, 1), change(5, 2), change(3, 1), change(4, 1), change(9, 1)];
    const started = new Map([
      [5, "2026-01-01T00:00:00Z"],
      [3, "2026-02-01T00:00:00Z"],
      [4, "2026-02-01T00:00:00Z"],
    ]);
    const split = rolloutSplit(changes, 3, started);
    expect(split.kept.map((c) => c.id)).toEqual(["5:1", "5:2", "3:1"]);
    expect(split.deferred.map((c) => c.id)).toEqual(["4:1", "9:1"]);
    expect(rolloutSplit(changes, 2, started).kept.map((c) => c.id)).toEqual(["5:1", "5:2"]);
  });
});
