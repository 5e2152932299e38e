/** `plan --at` and `forecast` end to end: the built CLI against the sandbox over HTTP (docs/forecast.md). */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  dir = await tempDir("flowrules-forecast-");
});
afterAll(async () => {
  await sb.close();
});

const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" });

describe("plan --at", () => {
  it("says it is a forecast in every view, carries forecast_at, and apply refuses it in one line", async () => {
    const out = join(dir, "forecast.json");
    const r = await runCli(["plan", "--at", "+60d", "--out", out, "-q"], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Forecast for \d{4}-\d\d-\d\dT\d\d:\d\dZ: .*\.$/m);
    const plan = JSON.parse(await readFile(out, "utf8")) as { forecast_at: string; created_at: string };
    const ahead = Date.parse(plan.forecast_at) - Date.parse(plan.created_at);
    expect(ahead).toBeGreaterThanOrEqual(60 * 86_400_000);
    expect(ahead).toBeLessThan(60 * 86_400_000 + 120_000);
    const md = await runCli(["show", out, "--format", "markdown"], env());
    expect(md.stdout).toContain("Forecast for ");
    const html = await runCli(["show", out, "--format", "html"], env());
    expect(html.stdout).toContain('id="forecast"');

    sb.clearRequests();
    const apply = await runCli(["apply", out], env());
    expect(apply.code).toBe(1);
    expect(apply.stderr.trim().split("\n")).toHaveLength(1);
    expect(apply.stderr).toMatch(/a forecast cannot be applied; plan again at or after \d{4}-\d\d-\d\dT\d\d:\d\dZ/);
    expect(sb.requests().filter((q) => q.method === "POST")).toEqual([]);
  });

  it("with --state, neither reads nor writes the state dir (docs/forecast.md)", async () => {
    const state = join(dir, "state");
    const r = await runCli(["plan", "--at", "+7d", "--state", state], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("a forecast neither reads nor writes the state dir");
    expect(existsSync(state)).toBe(false);
  });

  it("warns that total_runtime filters stay as of now (the service's clock judges them)", async () => {
    const file = join(dir, "runtime.yaml");
    await writeFile(
      file,
      "version: 1\nrules:\n  - name: long-runners\n    workflow: 1043\n    select: { status: running, total_runtime_min: P20D }\n    actions:\n      - report: { group_by: stage }\n",
    );
    const r = await runCli(["plan", file, "--at", "+7d", "-q"], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `warning: rule "long-runners": total_runtime filters are judged by the service's clock, so the forecast counts them as of now`,
    );
    const today = await runCli(["plan", file, "-q"], env());
    expect(today.stderr).not.toContain("total_runtime");
  });

  it("refuses a time it cannot read, in one line, before any request", async () => {
    sb.clearRequests();
    for (const at of ["tomorrow", "+7", "2026-12-05T09:00"]) {
      const r = await runCli(["plan", "--at", at], env());
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/--at /);
    }
    expect(sb.requests()).toEqual([]);
  });
});

describe("forecast", () => {
  it("writes the JSON document its schema describes, one point a day, and the same in text, Markdown and HTML", async () => {
    const r = await runCli(["forecast", "--until", "+60d", "--every", "10d", "--format", "json", "-q"], env());
    expect(r.code, r.stderr).toBe(0);
    const schema = JSON.parse(await readFile("schemas/forecast.schema.json", "utf8")) as Record<string, unknown>;
    const validate = new Ajv2020Module.default({ allErrors: true, strict: true }).compile(schema);
    const doc = JSON.parse(r.stdout) as {
      points: string[];
      rules: Array<{ rule: string; points: Array<{ changes: number; added: number }> }>;
    };
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.points).toHaveLength(7);
    // the starter onboarding rule aborts instances untouched for 90 days: within 60 days time alone adds some
    const abandoned = doc.rules.find((x) => x.rule === "abort-abandoned-onboardings");
    expect(abandoned?.points.at(-1)?.added ?? 0).toBeGreaterThan(0);

    const text = await runCli(["forecast", "--until", "+60d", "--every", "10d", "-q"], env());
    expect(text.stdout).toMatch(/^Now: /m);
    expect(text.stdout).toMatch(/^\w{3} \d{1,2} \w{3}: \+\d+ abort \(abort-abandoned-onboardings\)/m);
    expect(text.stdout).toMatch(
      /abort-abandoned-onboardings: by \w{3} \d{1,2} \w{3} time alone brings \+\d+ abort \(first on /,
    );
    const md = await runCli(["forecast", "--until", "+60d", "--every", "10d", "--format", "markdown", "-q"], env());
    expect(md.stdout).toContain("| `abort-abandoned-onboardings` |");
    const html = await runCli(["forecast", "--until", "+60d", "--every", "10d", "--format", "html", "-q"], env());
    expect(html.stdout).toMatch(/^<!doctype html>/);
    expect(html.stdout).toContain('<section class="rule" data-rule="abort-abandoned-onboardings">');
    expect(html.stdout).toContain("<svg");
    // self-contained: nothing loaded from anywhere
    expect(html.stdout).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("refuses a horizon in the past and a step without a unit, in one line", async () => {
    for (const args of [
      ["--until", "2020-01-01T00:00Z"],
      ["--until", "+7d", "--every", "1"],
    ]) {
      const r = await runCli(["forecast", ...args], env());
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
