/** `flowrules plan --explain-requests` and the `plan.requests` log events: the built CLI against the sandbox. */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

let sb: RunningSandbox;
let file: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 3000, seed: 5 });
  const dir = await tempDir("flowrules-explain-");
  file = join(dir, "rules.yaml");
  await writeFile(
    file,
    `
version: 1
rules:
  - { name: by-priority, workflow: 1045, select: { status: [running] }, actions: [ { report: { group_by: priority } } ] }
  - { name: by-status, workflow: 1045, select: { status: [running] }, actions: [ { report: { group_by: status } } ] }
  - { name: done, workflow: 1044, select: { status: [completed] }, actions: [ { report: { group_by: status } } ] }
  - { name: ended, workflow: 1044, select: { status: [completed, aborted] }, actions: [ { report: { group_by: status } } ] }
`,
  );
});
afterAll(async () => {
  await sb.close();
});

const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" });

describe("plan --explain-requests", () => {
  it("says on stderr why each selection is listed, shared or filtered, and how priority is learnt", async () => {
    const r = await runCli(["plan", file, "--explain-requests"], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /^requests: workflow 1045, status=running: list, \d+ requests?: listed once for 2 users: no other selection of the rule set narrows to it \[by-priority, by-status\]$/m,
    );
    expect(r.stderr).toMatch(
      /^requests: workflow 1044, status=completed: filter, 0 requests: filtered client-side from the selection of ended by status in \(completed\).*\[done\]$/m,
    );
    expect(r.stderr).toMatch(
      /^requests: workflow 1045, priority of by-priority: priority lists, \d+ requests: .* instead of \d+ record reads \[by-priority\]$/m,
    );
    expect(r.stderr).not.toContain("sandbox-admin");
  });

  it("logs the same choices as plan.requests events in the JSON log, and prints them only there", async () => {
    const r = await runCli(["plan", file, "--log-format", "json", "-q"], env());
    expect(r.code, r.stderr).toBe(0);
    const events = r.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const choices = events.filter((e) => e.event === "plan.requests");
    expect(choices.map((e) => e.choice)).toEqual(expect.arrayContaining(["list", "filter", "priority lists"]));
    for (const c of choices) expect(typeof c.why).toBe("string");
    expect(r.stderr).not.toMatch(/^requests: /m);
  });
});
