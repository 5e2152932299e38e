/**
 * `plan --changed-since <ref>`: which rules changed between a git ref and the working tree, in a real temporary git
 * repository; then the CLI end to end against the sandbox (only changed rules planned, removed ones listed).
 */
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rulesChangedSince } from "../../src/ci/changed-since.js";
import { diffDefinitions, ruleDefinitions } from "../../src/ci/rule-definitions.js";
import { UserError } from "../../src/model/errors.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempRepo, type TempRepo } from "./git-repo.js";
import { tempDir } from "../helpers/temp.js";

const KEEP = `
  - name: keep-report
    workflow: 1044
    select: { status: [completed] }
    actions:
      - report: { group_by: status }
`;
const EDIT_V1 = `
  - name: edit-abort
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P90D }
    actions: [abort]
`;
const EDIT_V2 = `
  - name: edit-abort
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P60D }
    actions: [abort]
`;
const GONE = `
  - name: gone-report
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: tags }
`;
const NEW = `
  - name: new-report
    workflow: 1042
    select: { status: [aborted] }
    actions:
      - report: { group_by: status }
`;
const file = (...rules: string[]): string => `version: 1\nrules:${rules.join("")}`;

let repo: TempRepo;
let base: string;

beforeAll(async () => {
  repo = await tempRepo();
  await repo.write("rules/a.yaml", file(KEEP, EDIT_V1));
  await repo.write("rules/b.yaml", file(GONE));
  await repo.write("rules/a.test.yaml", "tests: []\n");
  base = await repo.commit("base");
  // keep-report: reformatted only (flow → block style, a comment): not a change
  await repo.write(
    "rules/a.yaml",
    `version: 1\nrules:\n  # still the same rule\n  - name: keep-report\n    workflow: 1044\n    select:\n      status: [completed]\n    actions:\n      - report:\n          group_by: status\n${EDIT_V2}`,
  );
  await repo.remove("rules/b.yaml");
  await repo.write("rules/c.yaml", file(NEW));
  await repo.commit("edit, remove, add");
});

describe("rule definitions", () => {
  it("compares canonical JSON: formatting and key order are no change, a value is", () => {
    const a = ruleDefinitions("a.yaml", file(KEEP, EDIT_V1));
    const b = ruleDefinitions(
      "a.yaml",
      `version: 1\nrules:\n  - { actions: [ { report: { group_by: status } } ], select: { status: [completed] }, workflow: 1044, name: keep-report }${EDIT_V2}`,
    );
    const d = diffDefinitions(a, b);
    expect(d).toEqual({ added: [], changed: ["edit-abort"], unchanged: ["keep-report"], removed: [] });
  });

  it("resolves YAML anchors, so editing a shared anchor changes every rule using it", () => {
    const v = (days: number): string =>
      `version: 1\nx-select: &sel { status: [running], last_updated_time_before: -P${days}D }\nrules:\n  - { name: one, workflow: 1, select: *sel, actions: [abort] }\n  - { name: two, workflow: 1, select: { status: [running] }, actions: [abort] }\n`;
    const d = diffDefinitions(ruleDefinitions("f", v(90)), ruleDefinitions("f", v(30)));
    expect(d.changed).toEqual(["one"]);
    expect(d.unchanged).toEqual(["two"]);
  });

  it("a file that does not parse contributes no definitions", () => {
    expect(ruleDefinitions("f", "version: 1\nrules: [ {")).toEqual([]);
  });
});

describe("rulesChangedSince", () => {
  it("finds added, edited and removed rules between a ref and the working tree, across files", async () => {
    const c = await rulesChangedSince("HEAD~1", [join(repo.dir, "rules")], repo.dir);
    expect(c.commit).toBe(base);
    expect(c.added).toEqual(["new-report"]);
    expect(c.changed).toEqual(["edit-abort"]);
    expect(c.unchanged).toEqual(["keep-report"]);
    expect(c.removed).toEqual([{ name: "gone-report", file: "rules/b.yaml" }]);
  });

  it("counts uncommitted edits of the working tree", async () => {
    const c = await rulesChangedSince("HEAD", [join(repo.dir, "rules")], repo.dir);
    expect(c.added).toEqual([]);
    expect(c.changed).toEqual([]);
    await repo.write("rules/c.yaml", file(NEW.replace("[aborted]", "[completed]")));
    try {
      const after = await rulesChangedSince("HEAD", [join(repo.dir, "rules")], repo.dir);
      expect(after.changed).toEqual(["new-report"]);
    } finally {
      await repo.write("rules/c.yaml", file(NEW));
    }
  });

  it("takes a single file path as given", async () => {
    const c = await rulesChangedSince(base, [join(repo.dir, "rules/a.yaml")], repo.dir);
    expect(c).toMatchObject({ added: [], changed: ["edit-abort"], unchanged: ["keep-report"], removed: [] });
  });

  it("a clear error for an unknown ref and outside a git repository", async () => {
    await expect(rulesChangedSince("no-such-branch", [join(repo.dir, "rules")], repo.dir)).rejects.toThrow(
      /unknown git ref "no-such-branch"/,
    );
    await expect(rulesChangedSince("--output=x", [join(repo.dir, "rules")], repo.dir)).rejects.toBeInstanceOf(
      UserError,
    );
    const outside = await tempDir("flowrules-nogit-");
    await expect(rulesChangedSince("HEAD", [outside], outside)).rejects.toThrow(/not inside a git repository/);
  });
});

describe("flowrules plan --changed-since (CLI against the sandbox)", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });
  const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" });

  it("plans only the added and edited rules and lists the removed one in json, text and markdown", async () => {
    const out = join(repo.dir, "plan.json");
    const json = await runCli(
      ["plan", "rules", "--changed-since", "HEAD~1", "--format", "json", "--out", out, "-q"],
      env(),
      { cwd: repo.dir },
    );
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.stdout) as {
      rules: Array<{ name: string }>;
      removed_rules: Array<{ name: string; file: string }>;
      changed_since: { ref: string; commit: string; added: string[]; changed: string[] };
      digest: string;
    };
    expect(plan.rules.map((r) => r.name).sort()).toEqual(["edit-abort", "new-report"]);
    expect(plan.removed_rules).toEqual([{ name: "gone-report", file: "rules/b.yaml" }]);
    expect(plan.changed_since).toMatchObject({
      ref: "HEAD~1",
      commit: base,
      added: ["new-report"],
      changed: ["edit-abort"],
    });
    // the same document, with its digest covering the added keys, is written by --out
    expect(JSON.parse(await readFile(out, "utf8"))).toMatchObject({ removed_rules: plan.removed_rules });

    const text = await runCli(["plan", "rules", "--changed-since", "HEAD~1", "-q"], env(), { cwd: repo.dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /Changed since HEAD~1 \([0-9a-f]{12}\): 2 rules planned \(added new-report; edited edit-abort\); 1 unchanged rule not planned\./,
    );
    expect(text.stdout).toContain("  - gone-report (was in rules/b.yaml)");
    expect(text.stdout).not.toContain("Rule keep-report");
    expect(text.stdout.trimEnd().split("\n").pop()).toMatch(/^Plan: /);

    const md = await runCli(["plan", "rules", "--changed-since", "HEAD~1", "--format", "markdown", "-q"], env(), {
      cwd: repo.dir,
    });
    expect(md.stdout.startsWith("## flowrules plan\n\n> Changed since `HEAD~1`")).toBe(true);
    expect(md.stdout).toContain("- `gone-report` (was in `rules/b.yaml`)");
  });

  it("nothing changed: no rule planned, no request sent, exit 0", async () => {
    sb.clearRequests();
    const r = await runCli(["plan", "rules", "--changed-since", "HEAD", "--detailed-exitcode", "-q"], env(), {
      cwd: repo.dir,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no rule was added or edited");
    expect(sb.requests()).toHaveLength(0);
  });

  it("exits 1 with one clear line for an unknown ref, and outside a repository", async () => {
    const r = await runCli(["plan", "rules", "--changed-since", "origin/nope"], env(), { cwd: repo.dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^flowrules: --changed-since: unknown git ref "origin\/nope"/m);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const outside = await tempDir("flowrules-nogit-");
    const copy = join(outside, "c.yaml");
    await copyFile(join(repo.dir, "rules", "c.yaml"), copy);
    const o = await runCli(["plan", copy, "--changed-since", "HEAD"], env(), { cwd: outside });
    expect(o.code).toBe(1);
    expect(o.stderr).toMatch(/is not inside a git repository/);
  });
});
