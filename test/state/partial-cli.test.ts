/**
 * `plan --max-duration … --partial` as users run it (docs/operating.md, "A partial plan"): the built CLI against the
 * sandbox, a first sync cut by the deadline. With --partial the plan is made from what was read and says so in every
 * view, its changes are among a stateless plan's, and apply refuses it in one line; without --partial no plan is made.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { closeAfterAll, cleanUp, tempDir } from "../helpers/temp.js";
import { comparable } from "../helpers/comparable-plan.js";

const RULES = fileURLToPath(new URL("../../rules/", import.meta.url));
let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 3000, seed: 3, latencyMs: 2 }));
  dir = await tempDir("flowrules-partial-cli-");
});
afterAll(cleanUp);

const env = (rate: string): Record<string, string> => ({
  FLOWRULES_BASE_URL: sb.baseUrl,
  FLOWRULES_API_KEY: "sandbox-admin",
  FLOWRULES_RATE_LIMIT: rate,
});

interface PlanJson {
  partial?: {
    synced: number | null;
    total: number | null;
    workflows: { workflow_id: number; synced: number; total: number | null }[];
    rules_cut: string[];
    rules_partial?: { rule: string; selected: number; total: number | null }[];
    cut_reasons?: { rule: string; reason: string }[];
  };
  rules: { name: string; selected: number; matched: number; changes: number }[];
  changes: { rule: string; instance_id: number; kind: string; request?: unknown }[];
  reports: { rule: string; groups: { key: string; instance_ids: number[] }[] }[];
  errors: unknown[];
}

/**
 * Rules that read the whole record (`instance.tags`), so what they read comes with the sync's records: a report, a
 * change and an abort from list elements alone, with no limits (a limit is judged over the whole selection only).
 */
const RECORD_RULES = `version: 1
rules:
  - name: tagged-claims
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running] }
    when: '"expenses" in instance.tags'
    actions: [ { report: { group_by: priority, columns: [id, name, fields.amount] } } ]
  - name: approve-travel
    workflow: 1042
    fields: { amount: { step: 20111, action: 50222 } }
    select: { status: [running], active_step_id: 20111 }
    when: 'fields.amount < 300 and "travel" in instance.tags'
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50231, value: { date: "2026-06-15" } } ] }
  - name: abort-stale
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P90D }
    actions: [ abort ]
`;

const changeKey = (c: { rule: string; instance_id: number; kind: string }): string =>
  `${c.rule}/${c.instance_id}/${c.kind}`;

describe("plan --partial", () => {
  it("a sync cut by --max-duration gives a plan marked partial in every view, a subset of the stateless plan; apply refuses it", async () => {
    const state = join(dir, "state");
    const out = join(dir, "partial.json");
    // a key of 60 a minute: 3,000 instances cannot be read in a second (the client's window lets ~57 go at once)
    const cut = await runCli(
      ["plan", RULES, "--state", state, "--max-duration", "1s", "--partial", "--out", out],
      env("60"),
    );
    expect(cut.code, cut.stderr).toBe(0);
    expect(cut.stderr).toMatch(
      /--max-duration 1s ran out before the sync was complete: a partial plan \(apply refuses it\)/,
    );
    expect(cut.stdout).toMatch(/^Partial: synced [\d,]+ of ~[\d,]+ instances; changes and reports cover only those/m);
    expect(cut.stdout).toMatch(/^Partial plan: /m);
    const plan = JSON.parse(readFileSync(out, "utf8")) as PlanJson;
    expect(plan.partial).toBeDefined();
    const p = plan.partial!;
    expect(p.synced).toBeGreaterThan(0);
    expect(p.total).toBeGreaterThan(p.synced!);
    expect(p.workflows.length).toBeGreaterThan(0);
    expect(p.workflows.reduce((n, w) => n + w.synced, 0)).toBe(p.synced);
    expect(p.rules_cut.length).toBeGreaterThan(0);
    // the rules the deadline cut are named in `partial`, not reported as errors
    expect(JSON.stringify(plan.errors)).not.toMatch(/stopped|aborted/i);
    expect(plan.changes.every((c) => !p.rules_cut.includes(c.rule))).toBe(true);
    // the sync so far is kept for the next run (a checkpoint, not a complete state)
    const file = join(state, "state.jsonl");
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, "utf8")).not.toContain('{"end":');

    const md = await runCli(["show", out, "--format", "markdown"], env("0"));
    expect(md.stdout).toMatch(/Partial: synced [\d,]+ of ~[\d,]+ instances; changes and reports cover only those/);
    const html = await runCli(["show", out, "--format", "html"], env("0"));
    expect(html.stdout).toContain('id="partial"');
    expect(html.stdout).toContain("Partial: synced ");

    sb.clearRequests();
    const apply = await runCli(["apply", out, "--auto-approve"], env("0"));
    expect(apply.code).toBe(1);
    expect(apply.stderr.trim().split("\n")).toHaveLength(1);
    expect(apply.stderr).toMatch(
      /a partial plan \(made with --partial before the sync was complete\) cannot be applied/,
    );
    expect(sb.requests().filter((q) => q.method !== "GET")).toEqual([]);

    // its changes are among the stateless plan's at the same data
    const stateless = await runCli(["plan", RULES, "--format", "json"], env("0"));
    const full = JSON.parse(stateless.stdout) as PlanJson;
    expect(full.partial).toBeUndefined();
    const all = new Set(full.changes.map(changeKey));
    for (const c of plan.changes) expect(all.has(changeKey(c)), changeKey(c)).toBe(true);
    // the cut rules planned from the state may be complete (all of the abort's instances are listed early), never more
    expect(plan.changes.length).toBeLessThanOrEqual(full.changes.length);
  }, 60_000);

  it("the rules the deadline cut are planned from what the state holds: complete where all of it is held, else over the synced part and named", async () => {
    const rules = join(dir, "record-rules.yaml");
    writeFileSync(rules, RECORD_RULES);
    const state = join(dir, "state-held");
    const out = join(dir, "held.json");
    // a key of 600 a minute: the client's window lets ~570 requests go at once, fewer than the sync needs (~670)
    const cut = await runCli(
      ["plan", rules, "--state", state, "--max-duration", "4s", "--partial", "--out", out],
      env("600"),
    );
    expect(cut.code, cut.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(out, "utf8")) as PlanJson;
    const stateless = JSON.parse((await runCli(["plan", rules, "--format", "json"], env("0"))).stdout) as PlanJson;
    const p = plan.partial!;
    // a rule is cut only when its selection was not listed before the cut (a listing begun holds nothing), with why
    expect(p.rules_cut.filter((r) => r !== "abort-stale")).toEqual([]);
    for (const r of p.rules_cut)
      expect(p.cut_reasons?.find((c) => c.rule === r)?.reason).toMatch(/was not listed before the cut/);
    // the report over the records synced so far: named, with how many of the service's count it covers
    const tagged = p.rules_partial?.find((r) => r.rule === "tagged-claims");
    const full = (name: string): PlanJson["rules"][number] => stateless.rules.find((r) => r.name === name)!;
    expect(tagged).toBeDefined();
    expect(tagged!.selected).toBeGreaterThan(0);
    expect(tagged!.selected).toBeLessThan(tagged!.total!);
    expect(tagged!.total).toBe(full("tagged-claims").selected);
    expect(cut.stdout).toMatch(
      new RegExp(
        `planned over part of their selection: tagged-claims over ${tagged!.selected.toLocaleString("en-US")} of ~`,
      ),
    );
    // the abort reads list elements only: complete once its listing was read to its end (named nowhere, as the
    // stateless plan has it), else partial like any other
    const abortComplete =
      !p.rules_partial?.some((r) => r.rule === "abort-stale") && !p.rules_cut.includes("abort-stale");
    const keys = (pl: PlanJson, rule?: string): string[] =>
      pl.changes
        .filter((c) => rule === undefined || c.rule === rule)
        .map((c) => JSON.stringify([c.rule, c.instance_id, c.kind, c.request]))
        .sort();
    if (abortComplete) expect(keys(plan, "abort-stale")).toEqual(keys(stateless, "abort-stale"));
    // every change and report row of the partial rules is one the stateless plan has: never made up
    const all = new Set(keys(stateless));
    expect(keys(plan, "approve-travel").length).toBeGreaterThan(0);
    for (const k of keys(plan)) expect(all.has(k), k).toBe(true);
    const rows = (pl: PlanJson): string[] =>
      pl.reports.flatMap((r) => r.groups.flatMap((g) => g.instance_ids.map((id) => `${r.rule}/${g.key}/${id}`)));
    const fullRows = new Set(rows(stateless));
    expect(rows(plan).length).toBeGreaterThan(0);
    for (const row of rows(plan)) expect(fullRows.has(row), row).toBe(true);
    expect(rows(plan).length).toBeLessThan(fullRows.size);

    // the state it leaves is the sync so far, nothing of the partial plan: the next run finishes it as a stateless run
    const done = await runCli(["plan", rules, "--format", "json", "--state", state], env("0"));
    expect(done.code, done.stderr).toBe(0);
    expect(comparable(done.stdout)).toEqual(
      comparable((await runCli(["plan", rules, "--format", "json"], env("0"))).stdout),
    );
  }, 60_000);

  it("without --partial a cut sync makes no plan", async () => {
    const state = join(dir, "state-plain");
    const r = await runCli(["plan", RULES, "--format", "json", "--state", state, "--max-duration", "1s"], env("60"));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/--max-duration 1s ran out before the plan was complete: no plan was made/);
    expect(r.stderr).not.toMatch(/partial plan/);
  }, 30_000);
});
