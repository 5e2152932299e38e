import { describe, expect, it } from "vitest";
import { planFromInstances } from "../../src/engine/plan-offline.js";
import { instance } from "../helpers/instances.js";
import { rulesFromYaml } from "../helpers/rules.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");

const APPROVE = `
version: 1
rules:
  - name: approve
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      currency: { step: 20111, action: 50223 }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "Approved {{ fields.amount }} {{ fields.currency }}" }
            - action: 50231
              value: { date: "{{ $now() }}" }
            - action: 50299
              value: { inputValue: "{{ fields.amount * 2 }}" }
`;

const eur = (amount: number) => ({
  "20111:50222": { inputValue: amount },
  "20111:50223": { inputValue: { radioItemSelected: "EUR" } },
});

describe("planner (pure)", () => {
  it("plans complete_step for matching instances with templates evaluated per instance", async () => {
    const rs = await rulesFromYaml(APPROVE);
    const rule = rs.rules[0]!;
    const plan = await planFromInstances(
      [
        {
          rule,
          workflowId: 1042,
          instances: [instance({ id: 1, values: eur(50) }), instance({ id: 2, values: eur(150) })],
        },
      ],
      NOW,
    );
    expect(plan.errors).toEqual([]);
    expect(plan.changes).toHaveLength(1);
    const ch = plan.changes[0]!;
    expect(ch).toMatchObject({
      rule: "approve",
      instance_id: 1,
      kind: "complete_step",
      step_id: 20111,
      request: {
        method: "POST",
        path: "/instances/1/complete_step/",
        body: {
          step_id: 20111,
          mode: "complete",
          actions: [
            { action_id: 50230, input_object: { inputValue: "Approved 50 EUR" } },
            { action_id: 50231, input_object: { date: NOW.toISOString() } },
            // a string that is exactly one {{ }} takes the result's own type
            { action_id: 50299, input_object: { inputValue: 100 } },
          ],
        },
      },
      precondition: { status: "running", active_step_id: 20111 },
      before: { "step 20111": "active" },
      after: { "step 20111": "completed", "action 50230": "Approved 50 EUR" },
    });
    expect(plan.rules[0]).toMatchObject({ name: "approve", selected: 2, matched: 1, changes: 1, status: "ok" });
    expect(plan.summary).toMatchObject({ complete_step: 1, save_step: 0, abort: 0, reports: 0, errors: 0 });
  });

  it("treats a field with no value as absent, never null: the comparison is simply false", async () => {
    const rs = await rulesFromYaml(APPROVE);
    const plan = await planFromInstances(
      [
        {
          rule: rs.rules[0]!,
          workflowId: 1042,
          instances: [
            instance({ id: 1, values: { "20111:50223": { inputValue: { radioItemSelected: "EUR" } } } }),
            instance({
              id: 2,
              values: {
                "20111:50222": { inputValue: null },
                "20111:50223": { inputValue: { radioItemSelected: "EUR" } },
              },
            }),
            instance({
              id: 3,
              values: { "20111:50222": {}, "20111:50223": { inputValue: { radioItemSelected: "EUR" } } },
            }),
          ],
        },
      ],
      NOW,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.errors).toEqual([]);
    expect(plan.rules[0]?.matched).toBe(0);
  });

  it("skips, rather than plans, a step that the full record shows inactive and an instance that is not running", async () => {
    const rs = await rulesFromYaml(APPROVE);
    const plan = await planFromInstances(
      [
        {
          rule: rs.rules[0]!,
          workflowId: 1042,
          instances: [
            instance({ id: 1, values: eur(10), record: { active_step_ids: [20112] } }),
            instance({ id: 2, values: eur(10), status: "completed" }),
            instance({
              id: 3,
              values: eur(10),
              record: { active_step_ids: [20111], last_updated_time: "2026-10-01T00:00:00Z" },
            }),
          ],
        },
      ],
      NOW,
    );
    expect(plan.changes.map((c) => c.instance_id)).toEqual([3]);
    expect(plan.changes[0]?.precondition).toEqual({
      status: "running",
      active_step_id: 20111,
      last_updated_time: "2026-10-01T00:00:00Z",
    });
    expect(plan.rules[0]).toMatchObject({ matched: 3, skipped: 2, changes: 1 });
  });

  it("reports a conflict naming both rules and the instance, and plans neither change", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: first
    workflow: 1042
    actions: [ { save_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: a } } ] } } ]
  - name: second
    workflow: 1042
    when: instance.id = 7
    actions: [ { complete_step: { step: 20111 } } ]
  - name: third
    workflow: 1042
    when: instance.id = 8
    actions: [ abort ]
`);
    const insts = [instance({ id: 7 }), instance({ id: 8 }), instance({ id: 9 })];
    const plan = await planFromInstances(
      rs.rules.map((rule) => ({ rule, workflowId: 1042, instances: insts })),
      NOW,
    );
    const conflicts = plan.errors.filter((e) => e.code === "conflict");
    expect(conflicts).toHaveLength(2);
    expect(conflicts[0]?.message).toMatch(/instance 7.*"first".*"second"/);
    expect(conflicts[1]?.message).toMatch(/instance 8.*"first".*"third".*aborts/);
    // instance 9 is touched by one rule only
    expect(plan.changes.map((c) => `${c.rule}:${c.instance_id}`)).toEqual(["first:9"]);
  });

  it("leaves out a save whose values the step already holds, so scheduled runs are idempotent", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: note
    workflow: 1044
    actions:
      - save_step: { step: 20131, inputs: [ { action: 50264, value: { inputValue: "check {{ instance.id }}" } } ] }
`);
    const plan = await planFromInstances(
      [
        {
          rule: rs.rules[0]!,
          workflowId: 1044,
          instances: [
            instance({ id: 1, process_id: 1044, values: { "20131:50264": { inputValue: "check 1" } } }),
            instance({ id: 2, process_id: 1044, values: { "20131:50264": { inputValue: "older note" } } }),
            instance({ id: 3, process_id: 1044 }),
          ],
        },
      ],
      NOW,
    );
    expect(plan.changes.map((c) => c.instance_id)).toEqual([2, 3]);
    expect(plan.changes[0]?.before).toEqual({ "action 50264": "older note" });
    expect(plan.rules[0]).toMatchObject({ matched: 3, skipped: 1 });
  });

  it("plans one abort when two rules abort the same instance", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - { name: a, workflow: 1043, actions: [abort] }
  - { name: b, workflow: 1043, actions: [abort] }
`);
    const insts = [instance({ id: 5, process_id: 1043 })];
    const plan = await planFromInstances(
      rs.rules.map((rule) => ({ rule, workflowId: 1043, instances: insts })),
      NOW,
    );
    expect(plan.errors).toEqual([]);
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({
      rule: "a",
      kind: "abort",
      request: { path: "/instances/bulk/abort", body: { ids: [5] } },
    });
  });

  it("fails only the rule whose matches exceed max_instances, naming rule, count and limit", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: greedy
    workflow: 1043
    actions: [abort]
    limits: { max_instances: 2 }
  - name: modest
    workflow: 1044
    actions: [abort]
    limits: { max_instances: 5 }
`);
    const plan = await planFromInstances(
      [
        { rule: rs.rules[0]!, workflowId: 1043, instances: [1, 2, 3].map((id) => instance({ id, process_id: 1043 })) },
        { rule: rs.rules[1]!, workflowId: 1044, instances: [4, 5].map((id) => instance({ id, process_id: 1044 })) },
      ],
      NOW,
    );
    expect(plan.errors).toHaveLength(1);
    expect(plan.errors[0]).toMatchObject({ code: "limit", rule: "greedy" });
    expect(plan.errors[0]?.message).toContain("matched 3 instances");
    expect(plan.errors[0]?.message).toContain("max_instances: 2");
    expect(plan.changes.map((c) => c.instance_id)).toEqual([4, 5]);
    expect(plan.rules.map((r) => r.status)).toEqual(["failed", "ok"]);
  });

  it("reports an evaluation error with rule and instance id and goes on with the other instances", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: numeric
    workflow: 1042
    fields: { note: { step: 20111, action: 50230 } }
    when: $number(fields.note) > 10
    actions: [abort]
`);
    const plan = await planFromInstances(
      [
        {
          rule: rs.rules[0]!,
          workflowId: 1042,
          instances: [
            instance({ id: 1, values: { "20111:50230": { inputValue: "not a number" } } }),
            instance({ id: 2, values: { "20111:50230": { inputValue: "42" } } }),
          ],
        },
      ],
      NOW,
    );
    expect(plan.errors).toHaveLength(1);
    expect(plan.errors[0]).toMatchObject({ code: "evaluation", rule: "numeric", instance_id: 1 });
    expect(plan.errors[0]?.message).toContain('rule "numeric", instance 1');
    expect(plan.changes.map((c) => c.instance_id)).toEqual([2]);
  });

  it("cuts off a runaway expression with a clear error instead of hanging", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: runaway
    workflow: 1042
    when: "($f := function($x) { $f($x + 1) }; $f(0))"
    actions: [abort]
`);
    const plan = await planFromInstances(
      [{ rule: rs.rules[0]!, workflowId: 1042, instances: [instance({ id: 1 })] }],
      NOW,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.errors[0]?.message).toMatch(/deeper than \d+ levels|longer than \d+ ms/);
  });

  it("offers the context of DESIGN section 1: instance.status, tags, snapshot, now and the helper functions", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: ctx
    workflow: 1042
    when: >-
      instance.status = "running" and "urgent" in tags and snapshot.name = "Expense claim"
      and now = "${NOW.toISOString()}" and $daysSince(instance.started_time) = 10
      and $hoursUntil(instance.deadline) = 24
    actions: [abort]
`);
    const rec = {
      tags: ["urgent"],
      process_snapshot: { id: 1042, name: "Expense claim", steps: [] },
      started_time: "2026-10-22T12:00:00.000Z",
      deadline: "2026-11-02T12:00:00.000Z",
    };
    const plan = await planFromInstances(
      [
        {
          rule: rs.rules[0]!,
          workflowId: 1042,
          instances: [instance({ id: 1, record: rec }), instance({ id: 2, record: { ...rec, tags: [] } })],
        },
      ],
      NOW,
    );
    expect(plan.errors).toEqual([]);
    expect(plan.changes.map((c) => c.instance_id)).toEqual([1]);
  });

  it("groups a report by tags, counting an instance under each tag and untagged ones under (no tag)", async () => {
    const rs = await rulesFromYaml(`
version: 1
rules:
  - name: by-tag
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    actions:
      - report: { group_by: tags, columns: [id, priority, fields.amount] }
`);
    const plan = await planFromInstances(
      [
        {
          rule: rs.rules[0]!,
          workflowId: 1042,
          instances: [
            instance({
              id: 1,
              record: { tags: ["a", "b"], priority: "H" },
              values: { "20111:50222": { inputValue: 5 } },
            }),
            instance({ id: 2, record: { tags: ["b"] } }),
            instance({ id: 3, record: { tags: [] } }),
          ],
        },
      ],
      NOW,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.reports).toHaveLength(1);
    expect(plan.reports[0]).toMatchObject({
      rule: "by-tag",
      group_by: "tags",
      groups: [
        { key: "b", count: 2, instance_ids: [1, 2] },
        { key: "(no tag)", count: 1, instance_ids: [3] },
        { key: "a", count: 1, instance_ids: [1] },
      ],
    });
    expect(plan.reports[0]?.rows[0]).toEqual({ id: 1, priority: "H", "fields.amount": 5 });
    expect(plan.reports[0]?.rows[1]).toEqual({ id: 2, priority: null, "fields.amount": null });
    expect(plan.summary.reports).toBe(1);
  });
});
