/**
 * `flowrules explain` over real HTTP against the sandbox: an instance that matches, one that fails a select filter,
 * one that fails one clause of `when`, an unknown instance — and never a request that is not a GET. Instances are
 * picked from the sandbox store by their data, not by id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainCommand, type ExplainFormat } from "../../src/commands/explain.js";
import type { Explanation, RuleExplanation } from "../../src/engine/explain/index.js";
import { plainValue } from "../../src/model/field-values.js";
import { startSandbox, type InstanceState, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { captureIO, tempFiles } from "../rule-tests/helpers.js";

const NOW = new Date("2026-03-02T10:00:00.000Z");
const RULES = `version: 1
rules:
  - name: approve-small
    workflow: 1042
    fields:
      amount: { step: 20111, action: 50222 }
      currency: { step: 20111, action: 50223 }
    select:
      status: [running]
      active_step_id: 20111
      tags: [expenses]
    when: fields.amount < 100 and fields.currency = "EUR"
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "ok {{ fields.amount }}" }
  - name: onboardings
    workflow: { name: Employee onboarding }
    select: { status: [running] }
    actions:
      - report: { group_by: stage, columns: [id] }
`;

let sb: RunningSandbox;
let rulesDir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 11, instances: 400, now: NOW });
  rulesDir = await tempFiles({ "rules.yaml": RULES });
});
afterAll(async () => {
  await sb.close();
});

const amount = (i: InstanceState): unknown => plainValue(i.values.get(50222));
const currency = (i: InstanceState): unknown => plainValue(i.values.get(50223));
const waitingOnManager = (i: InstanceState): boolean =>
  i.abortedTime === null && i.completedTime === null && i.activeStepIds.includes(20111);

/** An instance of 1042 for which `pred` holds; when the seed has none, one waiting on the manager is edited to fit. */
function pick(pred: (i: InstanceState) => boolean, fit: (i: InstanceState) => void): InstanceState {
  const all = sb.store.list(1042);
  const found = all.find(pred);
  if (found) return found;
  const base = all.find(waitingOnManager);
  if (!base) throw new Error("no running expense claim waits on the manager in this seed");
  const edited = sb.store.update(base.id, fit);
  expect(pred(edited)).toBe(true);
  return edited;
}

async function explain(id: number, format: ExplainFormat = "json", rules: string[] = []) {
  sb.clearRequests();
  const c = captureIO();
  const code = await explainCommand(
    {
      paths: [rulesDir],
      instance: id,
      rules,
      format,
      now: NOW,
      connection: {
        baseUrl: sb.baseUrl,
        apiKey: "sandbox-admin",
        rateLimitPerMin: 0,
        concurrency: 4,
        timeoutMs: 10_000,
        insecureHttp: false,
      },
    },
    c.io,
  );
  const methods = sb.requests().map((r) => r.method);
  return { code, out: c.out(), err: c.err(), methods, paths: sb.requests().map((r) => r.path) };
}

function rule(e: Explanation, name: string): RuleExplanation {
  const r = e.rules.find((x) => x.rule === name);
  if (!r) throw new Error(`no explanation for ${name}`);
  return r;
}

describe("flowrules explain", () => {
  it("an instance that matches: every filter holds, field values, when and each clause true, the change it would plan", async () => {
    const inst = pick(
      (i) =>
        waitingOnManager(i) &&
        i.tags.includes("expenses") &&
        typeof amount(i) === "number" &&
        (amount(i) as number) < 100 &&
        currency(i) === "EUR",
      (i) => {
        i.tags = ["expenses"];
        i.values.set(50222, { inputValue: 42 });
        i.values.set(50223, { inputValue: { radioItemSelected: "EUR" } });
      },
    );
    const r = await explain(inst.id);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.methods.every((m) => m === "GET")).toBe(true);
    expect(r.paths).toContain(`/api/instances/${inst.id}/`);
    const e = JSON.parse(r.out) as Explanation;
    expect(e.instance).toMatchObject({ id: inst.id, status: "running", process_id: 1042 });
    const x = rule(e, "approve-small");
    expect(x.filters.map((f) => [f.key, f.result])).toEqual([
      ["status", "pass"],
      ["active_step_id", "pass"],
      ["tags", "pass"],
    ]);
    expect(x.selected).toBe("pass");
    expect(x.fields).toEqual([
      { alias: "amount", step: 20111, action: 50222, present: true, value: amount(inst) },
      { alias: "currency", step: 20111, action: 50223, present: true, value: "EUR" },
    ]);
    expect(x.when).toMatchObject({ value: true, holds: true, op: "and" });
    expect(x.when?.parts?.map((p) => [p.source, p.holds])).toEqual([
      ["fields.amount < 100", true],
      ['fields.currency = "EUR"', true],
    ]);
    expect(x.matched).toBe(true);
    expect(x.changes).toHaveLength(1);
    expect(x.changes[0]).toMatchObject({
      kind: "complete_step",
      step_id: 20111,
      request: {
        method: "POST",
        path: `/instances/${inst.id}/complete_step/`,
        body: {
          step_id: 20111,
          mode: "complete",
          actions: [{ action_id: 50230, input_object: { inputValue: `ok ${String(amount(inst))}` } }],
        },
      },
    });
    // the other rule targets another workflow, resolved by name with one GET /processes/
    expect(e.other_rules).toEqual([{ rule: "onboardings", workflow: "workflow 1043" }]);
    expect(r.paths.filter((p) => p === "/api/processes/")).toHaveLength(1);
    // JSON keeps ids in the change and adds the snapshot's names beside them; text shows the names by the ids
    expect(e.names).toEqual([
      {
        workflow_id: 1042,
        name: "Expense claim",
        steps: { "20111": "Manager approval" },
        fields: { "50222": "Amount", "50223": "Currency", "50230": "Manager comment" },
      },
    ]);
    const text = await explain(inst.id, "text");
    expect(text.out).toContain(`complete step 20111 "Manager approval"  (POST /instances/${inst.id}/complete_step/)`);
    expect(text.out).toMatch(/ {8}Manager comment \(50230\): .* → "ok \d/);
  });

  it("an instance that fails a select filter: which one, and what the instance has instead", async () => {
    const inst = pick(
      (i) => waitingOnManager(i) && !i.tags.includes("expenses") && i.tags.length > 0,
      (i) => {
        i.tags = ["travel"];
      },
    );
    const r = await explain(inst.id);
    expect(r.code).toBe(0);
    const x = rule(JSON.parse(r.out) as Explanation, "approve-small");
    const tags = x.filters.find((f) => f.key === "tags");
    expect(tags?.result).toBe("fail");
    expect(tags?.actual).toContain(inst.tags.join(", "));
    expect(x.filters.filter((f) => f.key !== "tags").every((f) => f.result === "pass")).toBe(true);
    expect(x.selected).toBe("fail");
    expect(x.matched).toBe(false);
    expect(x.changes).toEqual([]);

    const text = await explain(inst.id, "text");
    expect(text.out).toContain("Rule approve-small: not selected");
    expect(text.out).toMatch(/✗ tags = expenses\s+tags: /);
    expect(text.out).toMatch(/✓ active_step_id = 20111\s+active steps: .*20111/);
  });

  it("an instance that fails one clause of when: the clause and its value, the other clause holding", async () => {
    const inst = pick(
      (i) =>
        waitingOnManager(i) &&
        i.tags.includes("expenses") &&
        typeof amount(i) === "number" &&
        (amount(i) as number) >= 100 &&
        currency(i) === "EUR",
      (i) => {
        i.tags = ["expenses"];
        i.values.set(50222, { inputValue: 640.5 });
        i.values.set(50223, { inputValue: { radioItemSelected: "EUR" } });
      },
    );
    const r = await explain(inst.id);
    expect(r.code).toBe(0);
    const x = rule(JSON.parse(r.out) as Explanation, "approve-small");
    expect(x.selected).toBe("pass");
    expect(x.when?.holds).toBe(false);
    expect(x.when?.parts).toEqual([
      { source: "fields.amount < 100", value: false, holds: false },
      { source: 'fields.currency = "EUR"', value: true, holds: true },
    ]);
    expect(x.matched).toBe(false);
    expect(x.changes).toEqual([]);

    const text = await explain(inst.id, "text", ["approve-small"]);
    expect(text.out).toContain("Rule approve-small: selected, `when` does not hold");
    expect(text.out).toContain("✗ fields.amount < 100  → false");
    expect(text.out).toContain('✓ fields.currency = "EUR"  → true');
    // names beside ids, from the instance's own snapshot (no request for them)
    expect(text.out).toMatch(/amount \(20111:50222 "Amount"\)\s+= \d/);
    expect(text.out).toContain('— workflow 1042 Expense claim, running, active steps: 20111 "Manager approval"');
    // with --rule, the other rule is neither explained nor resolved
    expect(text.out).not.toContain("onboardings");
    expect(text.paths).toEqual([`/api/instances/${inst.id}/`]);
  });

  it("an unknown instance: exit 1 with the API status, and nothing on stdout", async () => {
    const missing = Math.max(...sb.store.ids()) + 1000;
    const r = await explain(missing);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toContain(`cannot read instance ${missing}`);
    expect(r.err).toContain("404");
    expect(r.methods).toEqual(["GET"]);
  });

  it("through the built CLI: explain never sends anything but GET, and --instance must be an id", async () => {
    const inst = sb.store.list(1042).find(waitingOnManager);
    expect(inst).toBeDefined();
    sb.clearRequests();
    const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
    const r = await runCli(["explain", rulesDir, "--instance", String(inst?.id), "--format", "json"], env);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Explanation).instance.id).toBe(inst?.id);
    expect(sb.requests().every((q) => q.method === "GET")).toBe(true);
    const bad = await runCli(["explain", rulesDir, "--instance", "abc"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--instance must be an instance id");
  });
});
