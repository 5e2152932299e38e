/** `flowrules plan` end to end: the built CLI against the sandbox over HTTP. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

let sb: RunningSandbox;
let dir: string;
const KEY = "sandbox-admin";

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  dir = await tempDir("flowrules-cli-");
});
afterAll(async () => {
  await sb.close();
});

// the sandbox has no rate limit; the default client-side 100 requests a minute would only slow the tests
const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: KEY, FLOWRULES_RATE_LIMIT: "0" });

async function rulesFile(name: string, yaml: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, yaml);
  return file;
}

describe("flowrules plan", () => {
  it("plans the starter rules (the default path) and writes the JSON plan with --out", async () => {
    const out = join(dir, "plan.json");
    const r = await runCli(["plan", "--out", out], env());
    expect(r.stderr).toMatch(/\d+ requests to http:\/\/127\.0\.0\.1:\d+\/api/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Plan: .*\.$/m);
    const plan = JSON.parse(await readFile(out, "utf8")) as {
      format_version: number;
      changes: unknown[];
      digest: string;
    };
    expect(plan.format_version).toBe(1);
    expect(plan.changes.length).toBeGreaterThan(0);
    expect(plan.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("exits 2 with --detailed-exitcode when there are changes, 0 for a report-only rule", async () => {
    const withChanges = await runCli(
      ["plan", "--detailed-exitcode", "--rule", "abort-abandoned-onboardings", "-q"],
      env(),
    );
    expect(withChanges.code).toBe(2);
    const reportOnly = await runCli(["plan", "--detailed-exitcode", "--rule", "overdue-expenses-by-tag", "-q"], env());
    expect(reportOnly.code).toBe(0);
    expect(reportOnly.stdout).toContain("Report Overdue expense claims");
    expect(reportOnly.stdout).not.toContain("abort-abandoned-onboardings");
  });

  it("exits 1 when a limit is exceeded, still showing the other rules", async () => {
    const file = await rulesFile(
      "limit.yaml",
      `
version: 1
rules:
  - { name: too-many, workflow: 1042, select: { status: [running] }, actions: [abort], limits: { max_instances: 1 } }
  - { name: fine, workflow: 1044, select: { status: [completed] }, actions: [ { report: { group_by: status } } ] }
`,
    );
    const r = await runCli(["plan", file, "--format", "markdown", "-q"], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/rule "too-many" matched \d+ instances, above its limit max_instances: 1/);
    expect(r.stdout).toContain("| `fine` | 1044 |");
  });

  it("validates before any request: a broken rule file exits 1 with file:line:col and sends nothing", async () => {
    const file = await rulesFile(
      "broken.yaml",
      "version: 1\nrules:\n  - name: x\n    workflow: 1042\n    actions: [abort]\n    when: fields.nope > 1\n",
    );
    sb.clearRequests();
    const r = await runCli(["plan", file], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/broken\.yaml:6:\d+/);
    expect(r.stderr).toContain("nope");
    expect(sb.requests()).toHaveLength(0);
  });

  it("json format on stdout parses and never contains the API key", async () => {
    const r = await runCli(["plan", "--format", "json", "-q"], env());
    expect(r.code).toBe(0);
    expect(() => JSON.parse(r.stdout) as unknown).not.toThrow();
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it("says what to set when the key or the URL is missing, without a stack trace", async () => {
    const noKey = await runCli(["plan"], { FLOWRULES_BASE_URL: sb.baseUrl });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain("FLOWRULES_API_KEY");
    expect(noKey.stderr).not.toMatch(/\n\s+at /);
    const noUrl = await runCli(["plan"], { FLOWRULES_API_KEY: KEY });
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain("--base-url");
  });

  it("reports an authentication failure with the request and status, not the key", async () => {
    const r = await runCli(["plan", "-q"], { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "wrong-key-1234" });
    expect(r.code).toBe(1);
    // said once, on stderr, with the variable that holds the key (issue 28), not as one error per rule in the plan
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/API key in FLOWRULES_API_KEY: 401 Unauthorized/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stdout + r.stderr).not.toContain("wrong-key-1234");
  });

  it("refuses plain http to a non-loopback host before sending anything", async () => {
    const r = await runCli(["plan", "-q"], {
      FLOWRULES_BASE_URL: "http://example.invalid/api",
      FLOWRULES_API_KEY: KEY,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/http/i);
    expect(r.stderr).toMatch(/insecure-http/);
  });

  it("--rule with an unknown name is an error naming it", async () => {
    const r = await runCli(["plan", "--rule", "no-such-rule"], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no-such-rule");
  });
});
