/**
 * --log-format on the built CLI, against the sandbox: with json every stderr line is one JSON event, for every verb;
 * the events carry the counts the outputs show; retries are logged; the API key never appears.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

type Event = Record<string, unknown> & { ts: string; level: string; event: string };

/** Every stderr line must parse as an event with the envelope; returns them in order. */
function events(stderr: string): Event[] {
  return stderr
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      let e: unknown;
      expect(() => (e = JSON.parse(l)), `not JSON: ${l}`).not.toThrow();
      expect(e).toMatchObject({
        ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        level: expect.stringMatching(/^(debug|info|warn|error)$/),
        event: expect.any(String),
      });
      return e as Event;
    });
}
const named = (list: Event[], name: string): Event[] => list.filter((e) => e.event === name);

const STARTER = resolve("rules");
let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sb.close();
});
const env = (key = "sandbox-admin", baseUrl = sb.baseUrl) => ({
  FLOWRULES_BASE_URL: baseUrl,
  FLOWRULES_API_KEY: key,
  FLOWRULES_RATE_LIMIT: "0",
});

describe("--log-format json", () => {
  it("plan: run.started, one rule.planned per rule with the plan's numbers, plan.finished, run.finished with counts", async () => {
    const r = await runCli(["plan", "--format", "json", "--log-format", "json"], env());
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout) as Plan;
    const ev = events(r.stderr);
    expect(ev[0]).toMatchObject({ event: "run.started", command: "plan", base_url: sb.baseUrl });
    const planned = named(ev, "rule.planned");
    expect(planned.map((e) => e.rule)).toEqual(plan.rules.map((x) => x.name));
    for (const x of plan.rules) {
      expect(planned.find((e) => e.rule === x.name)).toMatchObject({
        selected: x.selected,
        matched: x.matched,
        changes: x.changes,
        status: x.status,
      });
    }
    expect(named(ev, "plan.finished")[0]).toMatchObject({ changes: plan.changes.length, errors: 0 });
    expect(ev.at(-1)).toMatchObject({
      event: "run.finished",
      command: "plan",
      exit_code: 0,
      rules: plan.rules.length,
      changes_planned: plan.changes.length,
      requests: plan.summary.requests,
    });
    // the human request-count line is replaced by the events
    expect(r.stderr).not.toMatch(/^\d+ requests to/m);
  });

  it("is a global option: accepted before the verb too; text stays the default", async () => {
    const before = await runCli(["--log-format", "json", "validate", STARTER], {});
    expect(before.code).toBe(0);
    expect(named(events(before.stderr), "run.finished")[0]).toMatchObject({ command: "validate", exit_code: 0 });
    const text = await runCli(["plan", "-q"], env());
    expect(text.code).toBe(0);
    expect(text.stderr).toBe("");
    const bad = await runCli(["plan", "--log-format", "xml"], env());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Allowed choices are text, json/);
  });

  it("validate: a broken rule is a rule.diagnostic event with its place, and the run fails", async () => {
    const dir = await tempDir("flowrules-logv-");
    const file = join(dir, "broken.yaml");
    await writeFile(
      file,
      "version: 1\nrules:\n  - name: x\n    workflow: 1042\n    actions: [abort]\n    when: fields.nope > 1\n",
    );
    const r = await runCli(["validate", file, "--log-format", "json"], {});
    expect(r.code).toBe(1);
    const ev = events(r.stderr);
    expect(named(ev, "rule.diagnostic")[0]).toMatchObject({ file, line: 6, severity: "error", level: "error" });
    expect(ev.at(-1)).toMatchObject({ event: "run.finished", exit_code: 1, diagnostics: expect.any(Number) });
    // plan loads the same way: diagnostics as events, no text lines
    const p = await runCli(["plan", file, "--log-format", "json"], env());
    expect(p.code).toBe(1);
    expect(named(events(p.stderr), "rule.diagnostic")[0]).toMatchObject({ line: 6 });
  });

  it("a retried request is a request.retried event (sandbox answering 503s)", async () => {
    // seed 1 with failRate 0.5 draws 503s for this sequence of requests; the client retries them
    const flaky = await startSandbox({ port: 0, seed: 1, failRate: 0.5 });
    try {
      const r = await runCli(
        ["plan", "--rule", "abort-abandoned-onboardings", "--log-format", "json"],
        env("sandbox-admin", flaky.baseUrl),
      );
      const retried = named(events(r.stderr), "request.retried");
      expect(retried.length).toBeGreaterThan(0);
      expect(retried[0]).toMatchObject({
        level: "warn",
        method: "GET",
        path: expect.stringMatching(/^\//),
        attempt: 2,
        reason: "503",
      });
      expect(named(events(r.stderr), "run.finished")[0]?.retries).toBe(retried.length);
    } finally {
      await flaky.close();
    }
  });

  it("apply: one change.applied per change, run.finished with the applied count; plain lines become message events", async () => {
    const fresh = await startSandbox({ port: 0 });
    const cwd = await tempDir("flowrules-loga-");
    try {
      const r = await runCli(
        ["apply", STARTER, "--auto-approve", "--detailed-exitcode", "--log-format", "json"],
        env("sandbox-admin", fresh.baseUrl),
        { cwd },
      );
      expect(r.code, r.stderr).toBe(2);
      const ev = events(r.stderr);
      const applied = named(ev, "change.applied");
      const changes = named(ev, "plan.finished")[0]?.changes;
      expect(applied.length).toBe(changes);
      expect(applied[0]).toMatchObject({
        change_id: expect.any(String),
        rule: expect.any(String),
        instance_id: expect.any(Number),
        kind: expect.any(String),
      });
      expect(named(ev, "message").length).toBeGreaterThan(0);
      expect(ev.at(-1)).toMatchObject({ event: "run.finished", command: "apply", exit_code: 2, applied: changes });
    } finally {
      await fresh.close();
    }
  });

  it("test and explain log their runs too", async () => {
    const t = await runCli(["test", STARTER, "--log-format", "json"], {});
    expect(t.code, t.stdout + t.stderr).toBe(0);
    const tev = events(t.stderr);
    expect(named(tev, "tests.finished")[0]).toMatchObject({ failed: 0, passed: expect.any(Number) });
    expect(named(tev, "test.case").length).toBe(named(tev, "tests.finished")[0]?.passed);

    const id = sb.store.list(1042)[0]?.id;
    expect(id).toBeDefined();
    const x = await runCli(["explain", "--instance", String(id), "--log-format", "json"], env());
    expect(x.code, x.stderr).toBe(0);
    expect(events(x.stderr).at(-1)).toMatchObject({
      event: "run.finished",
      command: "explain",
      exit_code: 0,
      requests: expect.any(Number),
    });
  });

  it("sandbox: sandbox.started with the base URL, sandbox.stopped on SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      [CLI, "sandbox", "--port", "0", "--instances", "10", "--log-format", "json"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    try {
      await new Promise<void>((ready, fail) => {
        child.stderr.on("data", () => /sandbox\.started.*\n/.test(stderr) && ready());
        child.on("close", () => fail(new Error(`sandbox exited early: ${stderr}`)));
      });
      // one answered request: the sandbox is past start-up, its signal handlers are in place
      const started = events(stderr)[0];
      const res = await fetch(`${new URL(String(started?.base_url)).origin}/__sandbox/requests`);
      expect(res.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    await exited;
    const ev = events(stderr);
    expect(ev[0]).toMatchObject({
      event: "sandbox.started",
      base_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api$/),
      instances: 10,
    });
    expect(ev.at(-1)).toMatchObject({ event: "sandbox.stopped" });
  });

  it("a failure before the run is a run.failed event, not a text line", async () => {
    const r = await runCli(["plan", "--log-format", "json"], { FLOWRULES_API_KEY: "x-unused-key" });
    expect(r.code).toBe(1);
    const ev = events(r.stderr);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({
      event: "run.failed",
      level: "error",
      exit_code: 1,
      message: expect.stringMatching(/no service URL/),
    });
  });
});

describe("the API key never reaches the logs", () => {
  it("a unique key refused by the service (401) appears in no output of plan or apply, in either format", async () => {
    const key = `flowrules-ci-${randomUUID()}`;
    const cwd = await tempDir("flowrules-key-");
    const runs = [
      await runCli(["plan", "--log-format", "json"], env(key)),
      await runCli(["plan", STARTER, "--format", "json", "--out", join(cwd, "p.json")], env(key), { cwd }),
      await runCli(["apply", STARTER, "--auto-approve", "--log-format", "json"], env(key), { cwd }),
      await runCli(["explain", "--instance", "1", "--log-format", "json"], env(key)),
    ];
    for (const r of runs) {
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).not.toContain(key);
      // and it is not an empty failure: the 401 is reported
      expect(r.stdout + r.stderr).toMatch(/401/);
    }
    for (const r of [runs[0], runs[2], runs[3]]) expect(() => events(r?.stderr ?? "")).not.toThrow();
  });

  it("a working key appears in no event of a whole plan and apply", async () => {
    const fresh = await startSandbox({ port: 0 });
    const cwd = await tempDir("flowrules-key2-");
    try {
      const r = await runCli(
        ["apply", STARTER, "--auto-approve", "--log-format", "json"],
        env("sandbox-admin", fresh.baseUrl),
        { cwd },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(events(r.stderr).length).toBeGreaterThan(5);
      expect(r.stdout + r.stderr).not.toContain("sandbox-admin");
    } finally {
      await fresh.close();
    }
  });
});
