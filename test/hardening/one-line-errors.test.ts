/**
 * Issue 28, point 10: a wrong API key and an unreachable service are said once, in one line — with the status and
 * the variable that holds the key, or the address after the retries — instead of one error (and retry line) per
 * rule, request or workflow.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { closedPort } from "../api/helpers.js";
import { makePlan, MIXED_RULES, tempDir } from "../apply/helpers.js";
import { runCli } from "../helpers/cli.js";

let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 60, seed: 2810 });
  dir = await tempDir();
  await writeFile(join(dir, "rules.yaml"), MIXED_RULES);
  // writes plan.json, which "apply of a saved plan" applies
  await makePlan(sb, dir, MIXED_RULES);
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

const KEY_LINE =
  /^flowrules: (the service refused the API key in FLOWRULES_API_KEY: 401 Unauthorized \(Invalid API key\.\)|.*: 401 Unauthorized: Invalid API key\.; check the API key in FLOWRULES_API_KEY)/;

describe("a wrong API key", () => {
  it.each([
    ["plan", ["plan", "rules.yaml"]],
    ["plan --detailed-exitcode --out", ["plan", "rules.yaml", "--detailed-exitcode", "--out", "wrong.json"]],
    ["apply --auto-approve", ["apply", "rules.yaml", "--auto-approve"]],
    ["apply of a saved plan", ["apply", "plan.json"]],
    ["workflows", ["workflows"]],
  ])("%s: one line with the status and the variable, exit 1, no mutation", async (_what, args) => {
    sb.clearRequests();
    const r = await runCli(args, { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "not-the-key-28" }, { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    // said once, as the last line; an apply of a saved plan has said what it starts before (its progress lines)
    expect(
      lines.filter((l) => /\b401\b|Unauthorized|API key/.test(l)),
      r.stderr,
    ).toHaveLength(1);
    expect(lines.at(-1)).toMatch(KEY_LINE);
    if (args[0] !== "apply" || args[1] !== "plan.json") expect(lines, r.stderr).toHaveLength(1);
    expect(r.stderr).not.toContain("not-the-key-28");
    expect(sb.requests().filter((q) => q.method === "POST")).toEqual([]);
    // the first refusal stops the run: at most the requests already in flight (--concurrency 4) were sent
    expect(sb.requests().length).toBeLessThanOrEqual(4);
  });
});

describe("an unreachable service", () => {
  it("plan: one line naming the address after the retries, exit 1", async () => {
    const port = await closedPort();
    const r = await runCli(
      ["plan", "rules.yaml"],
      { FLOWRULES_BASE_URL: `http://127.0.0.1:${port}/api`, FLOWRULES_API_KEY: "sandbox-admin" },
      { cwd: dir },
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n"), r.stderr).toHaveLength(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^flowrules: cannot reach the service at http://127\\.0\\.0\\.1:${port}: could not connect \\(ECONNREFUSED\\) after 5 attempts`,
      ),
    );
  }, 60_000);
});
