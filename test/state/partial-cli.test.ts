/**
 * `plan --max-duration … --partial` as users run it (docs/operating.md, "A partial plan"): the built CLI against the
 * sandbox, a first sync cut by the deadline. With --partial the plan is made from what was read and says so in every
 * view, its changes are among a stateless plan's, and apply refuses it in one line; without --partial no plan is made.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { closeAfterAll, cleanUp, tempDir } from "../helpers/temp.js";

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
  };
  changes: { rule: string; instance_id: number; kind: string }[];
  errors: unknown[];
}

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
    expect(plan.changes.length).toBeLessThan(full.changes.length);
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
