/**
 * docs/watch.md, "/metrics, /healthz and /readyz": a rule held back by its own data is a finding for a person, not a
 * crash. The built CLI's `watch --apply` as a child process, with one rule over its `max_instances` and one that is
 * fine: the fine rule is applied, the held one sends nothing, `/healthz` stays 200, `/readyz` (503) and
 * `flowrules_rules_held` name the held rule, every error is shown, only the first cycle is labelled first, and the
 * retries of the held rule back off (the interval doubled per cycle in a row, capped); `history` lists the held
 * cycles too, in time order, narrowed by `--rule` and `--instance`.
 */
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { HistoryDocument } from "../../src/render/history/json-schema.js";
import { runCli, spawnCli, type CliRun } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { posts } from "../apply/helpers.js";
import { stderrOf } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WAIT = 30_000;

/** it-setup (workflow 1043) may touch at most one instance, and matches many; approve-budget (1044) is fine. */
const RULES = `version: 1
rules:
  - name: it-setup
    workflow: 1043
    select: { status: [running], active_step_id: 20121 }
    limits: { max_instances: 1 }
    actions:
      - complete_step: { step: 20121, inputs: [] }
  - name: approve-budget
    workflow: 1044
    select: { status: [running], active_step_id: 20131 }
    actions:
      - complete_step: { step: 20131, inputs: [] }
`;

let sb: RunningSandbox;
const children: CliRun[] = [];

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "watch", "index.js"))) execSync("npm run build", { cwd: ROOT, stdio: "ignore" });
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 400, seed: 11 }));
}, 120_000);

afterEach(() => {
  for (const c of children.splice(0))
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGKILL");
});

describe("a rule over its max_instances holds only itself", () => {
  it("the other rule is applied, /healthz stays 200, /readyz and /metrics name the held rule, the retries back off", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "rules.yaml"), RULES);
    const run = spawnCli(
      ["watch", "rules.yaml", "--apply", "--state", "state", "--interval", "1s", "--metrics-port", "0"],
      {
        FLOWRULES_BASE_URL: sb.baseUrl,
        FLOWRULES_API_KEY: "sandbox-admin",
        FLOWRULES_RATE_LIMIT: "0",
        // test-only: a shorter floor of the interval and a shorter cap of the back-off (docs/watch.md)
        FLOWRULES_WATCH_MIN_INTERVAL_MS: "200",
        FLOWRULES_WATCH_MAX_BACKOFF_MS: "4000",
      },
      { cwd: dir },
    );
    children.push(run);
    const w = { ...run, ...stderrOf(run.child) };
    const port = Number(
      /metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(await w.saw(/metrics on http:\/\/127\.0\.0\.1:\d+/, WAIT))?.[1],
    );
    const get = async (path: string): Promise<{ status: number; body: string }> => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: r.status, body: await r.text() };
    };

    const first = await w.saw(/cycle 1 \(first, 2 rules\): [^\n]*\n/, WAIT);
    expect(first).toMatch(
      /: ([1-9]\d*) planned, \1 applied, 0 stale, 0 failed, partly applied: 1 rule held back \(it-setup\), 1 error \(below\)/,
    );
    // every error of the cycle, in its own line
    expect(w.text()).toMatch(
      /^ {2}error: rule "it-setup" matched \d+ instances, above its limit max_instances: 1; none of its changes are planned$/m,
    );
    // the fine rule's changes reached the service, the held one's did not
    const steps = posts(sb).map((p) => (p.body as { step_id?: number } | null)?.step_id);
    expect(steps).toContain(20131);
    expect(steps).not.toContain(20121);

    const health = await get("/healthz");
    expect(health.status, health.body).toBe(200);
    const ready = await get("/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body).toMatch(
      /^not ready: 1 rule held back: it-setup \(rule "it-setup" matched \d+ instances, above its limit/,
    );
    const metrics = (await get("/metrics")).body;
    expect(metrics).toMatch(/^flowrules_rules_held\{rule="it-setup"\} 1$/m);
    expect(metrics).not.toMatch(/^flowrules_rules_held\{rule="approve-budget"\}/m);
    expect(metrics).toMatch(/^flowrules_cycles_total\{result="partial"\} 1$/m);

    // the retries: labelled retry, never first again, each after a longer wait (1 s, 2 s, 4 s: the cap)
    await w.saw(/cycle 4 \(retry, 2 rules\)/, WAIT);
    const lines = w
      .text()
      .split("\n")
      .filter((l) => / cycle \d+ \(/.test(l));
    expect(lines.filter((l) => /\(first,/.test(l))).toHaveLength(1);
    expect(
      lines.slice(1, 4).every((l) => /\(retry, 2 rules\).*partly applied: 1 rule held back \(it-setup\)/.test(l)),
    ).toBe(true);
    const at = lines.slice(0, 4).map((l) => Date.parse(l.slice(0, 24)));
    const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0));
    expect(gaps[1] ?? 0).toBeGreaterThan((gaps[0] ?? 0) * 1.5);
    expect(gaps[2] ?? 0).toBeGreaterThan((gaps[1] ?? 0) * 1.5);
    expect(w.text()).toMatch(/the held rules are tried again in 4\.0 s \(3 cycles in a row not fully applied/);
    // still alive and still not sending the held rule's changes
    expect((await get("/healthz")).status).toBe(200);
    expect(posts(sb).some((p) => (p.body as { step_id?: number } | null)?.step_id === 20121)).toBe(false);

    run.child.kill("SIGTERM");
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/cycle failed/);

    // history: the held cycles too, in time order; --rule and --instance narrow it
    const history = async (...args: string[]): Promise<HistoryDocument> => {
      const h = await runCli(["history", "--state", "state", "--format", "json", ...args], {}, { cwd: dir });
      expect(h.code, h.stderr).toBe(0);
      return HistoryDocument.parse(JSON.parse(h.stdout));
    };
    const all = await history();
    expect(all.cycles.length).toBeGreaterThanOrEqual(4);
    const starts = all.cycles.map((c) => c.started_at ?? "");
    expect([...starts].sort()).toEqual(starts);
    expect(all.cycles.map((c) => c.kind).slice(0, 4)).toEqual(["first", "retry", "retry", "retry"]);
    expect(all.cycles.every((c) => c.result === "partial" && (c.held ?? []).join() === "it-setup")).toBe(true);
    // the first cycle applied the budget rule's changes (a folder); the retries applied nothing
    expect(all.cycles[0]?.folder).not.toBeNull();
    expect(all.cycles.slice(1).every((c) => c.folder === null && c.changes.length === 0)).toBe(true);
    const held = await history("--rule", "it-setup");
    expect(held.cycles.length).toBe(all.cycles.length);
    expect(held.cycles.every((c) => c.changes.length === 0)).toBe(true);
    const budget = await history("--rule", "approve-budget");
    expect(budget.cycles).toHaveLength(1);
    const changes = budget.cycles[0]?.changes ?? [];
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.every((c) => c.rule === "approve-budget" && c.outcome === "applied")).toBe(true);
    const one = await history("--instance", String(changes[0]?.instance_id));
    expect(one.cycles.map((c) => c.changes.map((ch) => ch.instance_id))).toEqual([[changes[0]?.instance_id]]);
    const text = await runCli(["history", "--state", "state", "--rule", "it-setup", "--last", "1"], {}, { cwd: dir });
    expect(text.stdout).toMatch(
      /^cycle \d+ \(retry\) \(nothing applied\): \S+, partly applied: held back it-setup; no change$/m,
    );
    expect(text.stdout).toMatch(/^ {2}error: rule "it-setup" matched \d+ instances, above its limit max_instances: 1/m);
  }, 90_000);
});
