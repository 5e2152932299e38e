/**
 * Issue 35, point 8: each of these is one located, actionable line. A base URL without `/api` stops the run once with
 * a hint, before any plan is printed (it printed the 404 once per rule and then a plan); `--state /proc/1` says it is
 * not a usable state directory (it said ENOENT); `--compare REF` where a rule file was invalid YAML at REF warns,
 * naming the file and the ref (its rules counted as "added" silently).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { rulesChangedSince } from "../../src/ci/changed-since.js";
import { compareInput } from "../../src/ci/compare.js";
import { loadRules } from "../../src/rules/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { writeFile } from "node:fs/promises";
import { tempRepo } from "../ci/git-repo.js";

const BY_NAME = `version: 1
rules:
  - name: approve
    workflow: { name: Expense claim }
    actions:
      - complete_step: { step: 20111 }
  - name: stop
    workflow: { name: Employee onboarding }
    actions: [abort]
`;
const BY_ID = `version: 1
rules:
  - name: approve
    workflow: 1042
    actions:
      - complete_step: { step: 20111 }
  - name: stop
    workflow: 1043
    actions: [abort]
  - name: report
    workflow: 1044
    actions:
      - report: { group_by: status }
`;

let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 60, seed: 8 }));
  dir = await tempDir();
  await writeFile(join(dir, "by-name.yaml"), BY_NAME);
  await writeFile(join(dir, "by-id.yaml"), BY_ID);
});

describe("a base URL without /api", () => {
  it.each(["by-name.yaml", "by-id.yaml"])("stops the run once with a hint, before any plan (%s)", async (file) => {
    const origin = new URL(sb.baseUrl).origin;
    sb.clearRequests();
    const r = await runCli(
      ["plan", file],
      { FLOWRULES_BASE_URL: `${origin}/`, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" },
      { cwd: dir },
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([
      `flowrules: the service answered 404 for the workflow list at ${origin}/ — is the base URL missing /api?; nothing was planned`,
    ]);
    // nothing reached the API (the sandbox logs only requests under /api)
    expect(sb.requests()).toEqual([]);
  });

  it("a workflow that does not exist is still that rule's error, and the run goes on", async () => {
    await writeFile(
      join(dir, "unknown.yaml"),
      "version: 1\nrules:\n  - name: gone\n    workflow: 9999\n    actions: [abort]\n",
    );
    const r = await runCli(
      ["plan", "unknown.yaml", "by-id.yaml", "-q"],
      { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" },
      { cwd: dir },
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/rule "gone": listing instances of workflow 9999, page 1: 404 Not Found/);
    expect(r.stdout).toMatch(/Rule approve/);
  });
});

describe("a state dir in which no file can be created", () => {
  it.runIf(existsSync("/proc/1"))("--state /proc/1 says so in one line, before any request", async () => {
    sb.clearRequests();
    const r = await runCli(
      ["plan", "by-id.yaml", "--state", "/proc/1"],
      { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" },
      { cwd: dir },
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      "flowrules: cannot use the state dir /proc/1: not a usable state directory (no file can be created in it)",
    ]);
    expect(sb.requests()).toEqual([]);
  });
});

describe("a rule file that was invalid YAML at the compared ref", () => {
  it("warns in one line naming the file and the ref, for --compare and --changed-since", async () => {
    const repo = await tempRepo();
    await repo.write(
      "rules/a.yaml",
      "version: 1\nrules:\n  - name: approve\n    workflow: 1042\n    actions: [ abort\n",
    );
    await repo.write("rules/b.yaml", "version: 1\nrules:\n  - name: stop\n    workflow: 1043\n    actions: [abort]\n");
    const ref = await repo.commit("broken");
    await repo.write(
      "rules/a.yaml",
      "version: 1\nrules:\n  - name: approve\n    workflow: 1042\n    actions: [abort]\n",
    );
    const now = await loadRules([join(repo.dir, "rules")]);
    if (!now.ruleSet) throw new Error("the working tree's rules do not load");
    const input = await compareInput(ref, [join(repo.dir, "rules")], now.ruleSet, [], repo.dir);
    expect(input.sides.touched).toEqual([{ rule: "approve", status: "added" }]);
    expect(input.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^--compare: rules/a\\.yaml at ${ref} is not valid YAML \\(\\d+:\\d+ .+\\); its rules there cannot be compared, so they count as added$`,
        ),
      ),
    ]);
    const changed = await rulesChangedSince(ref, [join(repo.dir, "rules")], repo.dir);
    expect(changed.added).toEqual(["approve"]);
    expect(changed.warnings).toEqual([
      expect.stringMatching(/^--changed-since: rules\/a\.yaml at [0-9a-f]+ is not valid YAML/),
    ]);

    const r = await runCli(
      ["plan", "rules", "--compare", ref, "-q"],
      { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" },
      { cwd: repo.dir },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^warning: --compare: rules\/a\.yaml at [0-9a-f]+ is not valid YAML \(\d+:\d+ /),
    ]);
  });
});
