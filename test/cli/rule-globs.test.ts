/**
 * `--rule` globs end to end: the built CLI against the sandbox over loopback, on every verb that takes --rule
 * (plan, apply --auto-approve, explain, test). Each pattern must select exactly the rules it names, and a pattern
 * that matches nothing is one line naming it.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import picomatch from "picomatch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ruleSelection } from "../../src/rules/rule-patterns.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";

const RULES = `version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "Approved" } } ] }
  - name: approve-purchases
    workflow: 1044
    select: { status: [running], active_step_id: 20131 }
    actions:
      - save_step: { step: 20131, inputs: [ { action: 50264, value: { inputValue: "Checked" } } ] }
  - name: abort-onboardings
    workflow: 1043
    select: { status: [running] }
    actions: [abort]
  - name: report-expenses
    workflow: 1042
    select: { status: [running] }
    actions: [ { report: { group_by: status } } ]
`;

const TESTS = `version: 1
now: "2025-03-03T09:00:00Z"
tests:
  - name: approves a claim waiting on the manager
    rule: approve-expenses
    instances: [ { id: 1, active_step: 20111 } ]
    expect: { matched: [1] }
  - name: notes a purchase
    rule: approve-purchases
    instances: [ { id: 2, active_step: 20131 } ]
    expect: { matched: [2] }
  - name: aborts a running onboarding
    rule: abort-onboardings
    instances: [ { id: 3 } ]
    expect: { matched: [3] }
  - name: reports running claims
    rule: report-expenses
    instances: [ { id: 4 } ]
    expect: { matched: [4] }
`;

const ALL = ["approve-expenses", "approve-purchases", "abort-onboardings", "report-expenses"];

let sb: RunningSandbox;
let dir: string;
let rulesDir: string;
const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" });

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 3, instances: 150 });
  dir = await mkdtemp(join(tmpdir(), "flowrules-globs-"));
  rulesDir = join(dir, "rules");
  await mkdir(rulesDir);
  await writeFile(join(rulesDir, "rules.yaml"), RULES);
  await writeFile(join(rulesDir, "rules.test.yaml"), TESTS);
});
afterAll(async () => {
  await sb?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const rulesFlags = (patterns: string[]): string[] => patterns.flatMap((p) => ["--rule", p]);

async function plannedRules(patterns: string[]): Promise<string[]> {
  const r = await runCli(["plan", rulesDir, "--format", "json", "-q", ...rulesFlags(patterns)], env());
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const plan = JSON.parse(r.stdout) as { rules: Array<{ name: string }> };
  return plan.rules.map((x) => x.name).sort();
}

describe("--rule globs", () => {
  it.each([
    [["approve-*"], ["approve-expenses", "approve-purchases"]],
    [["a????-*"], ["abort-onboardings"]],
    [["[ar]*-expenses"], ["approve-expenses", "report-expenses"]],
    [["report-expenses"], ["report-expenses"]],
    [
      ["*-onboardings", "approve-e*"],
      ["abort-onboardings", "approve-expenses"],
    ],
    [["*"], [...ALL].sort()],
  ])("plan --rule %j selects exactly %j", async (patterns, want) => {
    expect(await plannedRules(patterns)).toEqual(want);
  });

  it("plan: a pattern that matches no rule is one line naming it and sends no request", async () => {
    sb.clearRequests();
    const r = await runCli(["plan", rulesDir, "-q", "--rule", "approve-*", "--rule", "aprove-expens*"], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    // a glob gets its "did you mean" as a plain name does (docs/operating.md, "Rule patterns")
    expect(lines[0]).toMatch(/no rule matches "aprove-expens\*" in .*; did you mean "approve-expenses"\?$/);
    expect(lines[0]).not.toContain('"approve-*"');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(sb.requests()).toHaveLength(0);
  });

  it("plan: an unknown exact name still says 'no rule named' with the closest name", async () => {
    const r = await runCli(["plan", rulesDir, "-q", "--rule", "approve-expense"], env());
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain('no rule named "approve-expense"');
    expect(r.stderr).toContain('did you mean "approve-expenses"?');
  });

  it("apply --auto-approve --rule 'abort-*' sends only the onboarding aborts", async () => {
    sb.clearRequests();
    const work = await mkdtemp(join(dir, "apply-"));
    const r = await runCli(["apply", rulesDir, "--auto-approve", "-q", "--rule", "abort-*"], env(), { cwd: work });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const runs = await readdir(join(work, ".flowrules", "runs"));
    expect(runs).toHaveLength(1);
    const plan = JSON.parse(await readFile(join(work, ".flowrules", "runs", runs[0] ?? "", "plan.json"), "utf8")) as {
      rules: Array<{ name: string }>;
      changes: Array<{ rule: string; kind: string }>;
    };
    expect(plan.rules.map((x) => x.name)).toEqual(["abort-onboardings"]);
    expect(plan.changes.length).toBeGreaterThan(0);
    expect(new Set(plan.changes.map((c) => c.kind))).toEqual(new Set(["abort"]));
    const posts = sb.requests().filter((q) => q.method === "POST");
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((q) => q.path.endsWith("/instances/bulk/abort"))).toBe(true);
  });

  it("apply --auto-approve with a pattern that matches nothing changes nothing", async () => {
    sb.clearRequests();
    const work = await mkdtemp(join(dir, "apply-none-"));
    const r = await runCli(["apply", rulesDir, "--auto-approve", "-q", "--rule", "zzz-*"], env(), { cwd: work });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain('no rule matches "zzz-*"');
    expect(r.stderr).not.toContain("did you mean");
    expect(sb.requests().filter((q) => q.method === "POST")).toHaveLength(0);
  });

  it("explain --rule '*-expenses' explains exactly the matching rules of the instance's workflow", async () => {
    const claim = sb.store.list(1042)[0];
    if (!claim) throw new Error("the sandbox has no expense claim");
    const r = await runCli(
      ["explain", rulesDir, "--instance", String(claim.id), "--format", "json", "--rule", "*-expenses"],
      env(),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const e = JSON.parse(r.stdout) as { rules: Array<{ rule: string }>; other_rules: Array<{ rule: string }> };
    expect(e.rules.map((x) => x.rule).sort()).toEqual(["approve-expenses", "report-expenses"]);
    expect(e.other_rules).toEqual([]);
    const none = await runCli(["explain", rulesDir, "--instance", String(claim.id), "--rule", "nothing-[xy]"], env());
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no rule matches "nothing-[xy]"');
  });

  it("test --rule runs exactly the cases of the selected rules", async () => {
    const r = await runCli(["test", rulesDir, "--rule", "approve-*", "--rule", "report-expenses"], {});
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("3 passed, 0 failed");
    expect(r.stdout).toContain("approves a claim");
    expect(r.stdout).toContain("notes a purchase");
    expect(r.stdout).toContain("reports running claims");
    expect(r.stdout).not.toContain("aborts a running onboarding");
    const bad = await runCli(["test", rulesDir, "--rule", "approve-?"], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toContain('no rule matches "approve-?"');
  });
});

describe("ruleSelection", () => {
  it("a glob that matches nothing suggests the name it is fewest edits of its own characters from, or none", () => {
    const names = ["approve-expenses", "approve-purchases", "abort-onboardings", "report-expenses"];
    const suggested = (pattern: string): string | undefined => ruleSelection([pattern]).unmatched(names)[0]?.closest;
    expect(suggested("aprove-*")).toBe("approve-expenses");
    expect(suggested("*-purchses")).toBe("approve-purchases");
    expect(suggested("{abrt,tidy}-onboardings")).toBe("abort-onboardings");
    expect(suggested("[xy]pprove-expenses")).toBe("approve-expenses");
    expect(suggested("approve-?")).toBeUndefined();
    expect(suggested("zzz-*")).toBeUndefined();
    expect(ruleSelection(["approve-*"]).unmatched(names)).toEqual([]);
  });

  const name = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,12}$/);

  it("an exact name selects itself and nothing else, over many random names", () => {
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 8 }), fc.nat(), (names, k) => {
        const want = names[k % names.length] ?? "";
        const s = ruleSelection([want]);
        expect(names.filter((n) => s.selects(n))).toEqual([want]);
        expect(s.unmatched(names)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it("a glob selects what picomatch matches, and is unmatched exactly when it selects none", () => {
    const glob = fc.tuple(name, fc.constantFrom("*", "?", "[a-m]", "-*", ".*")).map(([a, b]) => `${a.slice(0, 3)}${b}`);
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 10 }), glob, (names, pattern) => {
        const s = ruleSelection([pattern]);
        const m = picomatch(pattern, { dot: true });
        expect(names.filter((n) => s.selects(n))).toEqual(names.filter((n) => m(n)));
        expect(s.unmatched(names).length === 1).toBe(!names.some((n) => m(n)));
      }),
      { numRuns: 300 },
    );
  });
});
