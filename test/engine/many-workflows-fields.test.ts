/**
 * A rule over several workflows names its step and field by name, and each name stands for other ids in each workflow
 * (docs/writing-rules.md, "One rule over several workflows"): resolved per workflow, each change reads and writes its
 * own workflow's field, and the plan names them as that workflow does. The sandbox's workflows share no step names,
 * so a proxy on loopback shows workflow 1044's "Budget approval" step and its "Comment" field as "Manager approval"
 * and "Manager comment", the names 1042 gives its step 20111 and field 50230: same names, other ids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { startHostileProxy, type HostileProxy } from "../hardening/hostile-proxy.js";
import { rulesFromYaml } from "../helpers/rules.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");
let sb: RunningSandbox;
let proxy: HostileProxy;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 300, seed: 11, now: NOW });
  proxy = await startHostileProxy(sb.origin);
  // workflow 1044's names as 1042's (JSON string tokens only: no value of the demo data is one of them)
  proxy.setRule(() => ({
    answer: (up) => ({
      ...up,
      body: up.body.replaceAll('"Budget approval"', '"Manager approval"').replaceAll('"Comment"', '"Manager comment"'),
    }),
  }));
});
afterAll(async () => {
  await proxy?.close();
  await sb?.close();
});

const RULE = `
version: 1
rules:
  - name: note-approvals
    workflow: [1042, 1044]
    fields:
      note: { step: Manager approval, action: Manager comment }
    select: { status: [running], active_step_id: "Manager approval" }
    actions:
      - save_step:
          step: Manager approval
          inputs:
            - action: Manager comment
              value: { inputValue: "seen: {{ fields.note }}" }
`;

/** Per workflow: the step and field the names stand for there. */
const IDS: Record<number, { step: number; field: number }> = {
  1042: { step: 20111, field: 50230 },
  1044: { step: 20131, field: 50264 },
};

describe("field names over several workflows", () => {
  it("resolve per workflow: each change reads and writes its own workflow's field, and the plan names it so", async () => {
    const client = createClient({ baseUrl: proxy.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
    const plan = await runPlan({ client, ruleSet: await rulesFromYaml(RULE), now: NOW }).finally(() => client.close());
    expect(plan.errors).toEqual([]);
    expect(plan.rules[0]?.workflow_ids).toEqual([1042, 1044]);
    // the instances of each workflow whose step of that name is active: all planned, none other
    const expected = [1042, 1044]
      .flatMap((wf) =>
        sb.store
          .list(wf)
          .filter(
            (i) => i.completedTime === null && i.abortedTime === null && i.activeStepIds.includes(IDS[wf]?.step ?? 0),
          ),
      )
      .map((i) => i.id)
      .sort((a, b) => a - b);
    expect(new Set(plan.changes.map((c) => c.process_id))).toEqual(new Set([1042, 1044]));
    expect(plan.changes.map((c) => c.instance_id).sort((a, b) => a - b)).toEqual(expected);
    for (const c of plan.changes) {
      const ids = IDS[c.process_id];
      expect(ids, `workflow ${c.process_id}`).toBeDefined();
      expect(c.step_id).toBe(ids?.step);
      // the field written is this workflow's, and the value read through the alias is this instance's own
      const stored = sb.store.get(c.instance_id)?.values.get(ids?.field ?? 0) as { inputValue?: unknown } | undefined;
      const value = `seen: ${String(stored?.inputValue ?? "")}`;
      expect(c.request.body).toMatchObject({
        step_id: ids?.step,
        actions: [{ action_id: ids?.field, input_object: { inputValue: value } }],
      });
      // by its id, which the plan names per workflow (the alias stands for another field in each)
      expect(c.after).toEqual({ [`action ${ids?.field}`]: value });
    }
    // the names table: each workflow names its own ids, with the one name they share
    for (const wf of [1042, 1044]) {
      const n = plan.names?.find((x) => x.workflow_id === wf);
      expect(n?.steps?.[String(IDS[wf]?.step)]).toBe("Manager approval");
      expect(n?.fields?.[String(IDS[wf]?.field)]).toBe("Manager comment");
    }
    // and the view shows the names, not the ids, for the changes of both workflows
    const text = PLAN_FORMATS.text(plan, { color: false });
    for (const wf of [1042, 1044]) {
      const one = plan.changes.find((c) => c.process_id === wf);
      expect(text).toMatch(new RegExp(`#${one?.instance_id} .*save step ${IDS[wf]?.step} "Manager approval"`));
    }
    expect(text).not.toMatch(/action 50264|action 50230|fields\.note/);
    expect(text).toContain("Manager comment (50230): ");
    expect(text).toContain("Manager comment (50264): ");
  });
});
