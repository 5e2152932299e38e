/**
 * The workflow verbs end to end: the built CLI against the sandbox over HTTP — workflows, describe of every demo
 * workflow, init whose output validates, tests and plans, pull and the catalog checks of validate (no network),
 * the catalog's bad inputs, and plan refusing what does not fit.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, WORKFLOWS, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

let sb: RunningSandbox;
let empty: RunningSandbox;
const KEY = "sandbox-admin";

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  empty = await startSandbox({ port: 0, instances: 0 });
});
afterAll(async () => {
  await sb.close();
  await empty.close();
});

const env = (base = sb.baseUrl) => ({ FLOWRULES_BASE_URL: base, FLOWRULES_API_KEY: KEY, FLOWRULES_RATE_LIMIT: "0" });
const offline = { FLOWRULES_API_KEY: "", FLOWRULES_BASE_URL: "" };

async function tmp(): Promise<string> {
  return tempDir("flowrules-wf-");
}

interface DescribeJson {
  workflow: { id: number; name: string; folder: { id: number; name: string } | null };
  source: { instance_id: number; started_time: string } | null;
  steps: Array<{
    id: number;
    name: string;
    position: number;
    type: string;
    actions: Array<{ id: number; name: string; type: string; options?: string[] }>;
  }>;
}

describe("workflows and describe", () => {
  it("workflows lists id, name and folder of every visible workflow", async () => {
    const r = await runCli(["workflows", "--format", "json"], env());
    expect(r.code).toBe(0);
    const list = JSON.parse(r.stdout) as Array<{ id: number; name: string; folder: { name: string } }>;
    expect(new Set(list.map((w) => w.id))).toEqual(new Set(WORKFLOWS.map((w) => w.id)));
    expect(list.find((w) => w.id === 1042)).toMatchObject({ name: "Expense claim", folder: { name: "Finance" } });
    const text = await runCli(["workflows"], env());
    expect(text.stdout).toMatch(/^1042 {2}Expense claim {2}\(folder Finance\)$/m);
  });

  for (const wf of WORKFLOWS) {
    it(`describe ${wf.id} "${wf.name}" lists every step in order and every field, with options`, async () => {
      const r = await runCli(["describe", wf.name, "--format", "json"], env());
      expect(r.code).toBe(0);
      const d = JSON.parse(r.stdout) as DescribeJson;
      expect(d.workflow).toEqual({ id: wf.id, name: wf.name, folder: wf.folder });
      expect(d.source?.instance_id).toBeGreaterThan(0);
      expect(d.steps.map((s) => s.id)).toEqual([...wf.steps].sort((a, b) => a.position - b.position).map((s) => s.id));
      for (const s of wf.steps) {
        const got = d.steps.find((x) => x.id === s.id);
        expect(got).toMatchObject({ name: s.name, position: s.position });
        expect(got?.actions.map((a) => ({ id: a.id, name: a.name, type: a.type, options: a.options }))).toEqual(
          s.actions.map((a) => ({ id: a.id, name: a.name, type: a.type, options: a.options })),
        );
      }
      const yaml = await runCli(["describe", String(wf.id), "--format", "yaml"], env());
      expect(parse(yaml.stdout)).toEqual(d);
      // text: one pasteable `alias: { step, action }` line per field, ids first
      const text = await runCli(["describe", String(wf.id)], env());
      for (const s of wf.steps)
        for (const a of s.actions) expect(text.stdout).toContain(`{ step: ${s.id}, action: ${a.id} }`);
    });
  }

  it("describe of an unknown name: one line with the closest names, exit 1", async () => {
    const r = await runCli(["describe", "Expens claim"], env());
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/no workflow named "Expens claim" is visible to this API key; closest: "Expense claim"/);
  });

  it("describe of a workflow without any instance says so, exit 1", async () => {
    const r = await runCli(["describe", "1042"], env(empty.baseUrl));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /workflow 1042 "Expense claim" has no instance yet, so its steps and fields cannot be read/,
    );
  });
});

describe("init", () => {
  it("writes starter files that validate, test and plan; never overwrites", async () => {
    const cwd = await tmp();
    const r = await runCli(["init", "--workflow", "Expense claim", "--workflow", "1045"], env(), { cwd });
    expect(r.code).toBe(0);
    const rules = await readFile(join(cwd, "rules", "expense-claim.yaml"), "utf8");
    // a path inside the repository, the same on every clone: the dependency's schemas (README.md, "A rules repository")
    expect(rules.split("\n")[0]).toBe(
      "# yaml-language-server: $schema=../node_modules/flowrules/schemas/rules.schema.json",
    );
    expect((await readFile(join(cwd, "rules", "expense-claim.test.yaml"), "utf8")).split("\n")[0]).toBe(
      "# yaml-language-server: $schema=../node_modules/flowrules/schemas/rules-test.schema.json",
    );
    // what flowrules writes locally is ignored; the config file and the catalog are not
    const ignore = await readFile(join(cwd, ".gitignore"), "utf8");
    for (const line of [".flowrules/", "/plan.json", "*.journal.jsonl", "node_modules/"])
      expect(ignore.split("\n")).toContain(line);
    expect(ignore).not.toMatch(/^flowrules\.(config\.yaml|workflows\.json)$/m);
    for (const a of WORKFLOWS[0]?.steps.flatMap((s) => s.actions) ?? []) expect(rules).toContain(`action: "${a.name}"`);
    expect(rules).toMatch(/^ {6}amount: +\{ step: "Manager approval", action: "Amount" \}$/m);

    // pulled catalog → validate checks offline
    expect((await runCli(["pull"], env(), { cwd })).code).toBe(0);
    const v = await runCli(["validate"], offline, { cwd });
    expect(v.stdout).toMatch(/valid in 2 files, 2 rules/);
    expect(v.code).toBe(0);
    const t = await runCli(["test", "rules"], offline, { cwd });
    expect(t.stdout).toMatch(/2 passed, 0 failed/);
    expect(t.code).toBe(0);
    const p = await runCli(["plan", "--format", "json"], env(), { cwd });
    expect(p.code).toBe(0);
    const plan = JSON.parse(p.stdout) as { reports: Array<{ rule: string; groups: unknown[] }>; errors: unknown[] };
    expect(plan.errors).toEqual([]);
    expect(plan.reports.map((x) => x.rule).sort()).toEqual(["access-request-overview", "expense-claim-overview"]);

    await writeFile(join(cwd, "rules", "expense-claim.yaml"), "# mine\n");
    const again = await runCli(["init", "--workflow", "1042"], env(), { cwd });
    expect(again.stderr).toMatch(/expense-claim\.yaml exists; left as it is/);
    expect(await readFile(join(cwd, "rules", "expense-claim.yaml"), "utf8")).toBe("# mine\n");
    // the block is added once
    expect(await readFile(join(cwd, ".gitignore"), "utf8")).toBe(ignore);
  });
});

const BAD = `version: 1
rules:
  - name: bad-one
    workflow: 1042
    fields:
      amount: { step: Manager approval, action: Amout }
    actions:
      - complete_step:
          step: 20111
          inputs:
            - { action: 99999, value: { inputValue: x } }
            - { action: Currency, value: { inputValue: { radioItemSelected: YEN } } }
  - name: other-workflow-step
    workflow: 1042
    actions:
      - save_step: { step: 20131, inputs: [{ action: 50264, value: { inputValue: x } }] }
  - name: fine
    workflow: { name: Expense claim }
    fields: { amount: { step: Manager approval, action: Amount } }
    select: { status: [running] }
    when: fields.amount > 0
    actions: [ { report: { group_by: status } } ]
`;

describe("pull, validate with the catalog, plan live", () => {
  it("each mistake is refused by validate offline at its line, and by plan live with the other rules planned", async () => {
    const cwd = await tmp();
    await writeFile(
      join(cwd, "ok.yaml"),
      BAD.slice(0, BAD.indexOf("  - name: bad-one")) + BAD.slice(BAD.indexOf("  - name: fine")),
    );
    const pulled = await runCli(["pull", "ok.yaml"], env(), { cwd });
    expect(pulled.code).toBe(0);
    const cat = JSON.parse(await readFile(join(cwd, "flowrules.workflows.json"), "utf8")) as {
      format_version: number;
      base_url: string;
      workflows: DescribeJson[];
    };
    expect(cat).toMatchObject({ format_version: 1, base_url: sb.baseUrl });
    expect(cat.workflows.map((w) => w.workflow.id)).toEqual([1042]);

    await writeFile(join(cwd, "bad.yaml"), BAD);
    const v = await runCli(["validate", "bad.yaml"], offline, { cwd });
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(
      /^bad\.yaml:6:49 {2}error {2}.*fields\.amount\.action: field "Amout" is not a field of step 20111 "Manager approval".*closest first: 50222 "Amount"/m,
    );
    expect(v.stdout).toMatch(/^bad\.yaml:11:25 {2}error {2}.*field 99999 is not a field of step 20111/m);
    expect(v.stdout).toMatch(
      /^bad\.yaml:12:42 {2}error {2}.*inputs\[1\]\.value: "YEN" is not an option of radio field 50223 "Currency"/m,
    );
    expect(v.stdout).toMatch(
      /^bad\.yaml:16:28 {2}error {2}.*step 20131 is not a step of workflow 1042 "Expense claim"/m,
    );
    expect(v.stdout).not.toMatch(/\(fine\)/);

    const p = await runCli(["plan", "bad.yaml", "--format", "json"], env(), { cwd });
    expect(p.code).toBe(1);
    const plan = JSON.parse(p.stdout) as {
      errors: Array<{ code: string; rule: string; message: string }>;
      changes: unknown[];
      reports: Array<{ rule: string }>;
    };
    expect(new Set(plan.errors.map((e) => `${e.code} ${e.rule}`))).toEqual(
      new Set(["structure bad-one", "structure other-workflow-step"]),
    );
    expect(plan.errors.every((e) => !/https?:|\/processes\/|instance_ids/.test(e.message))).toBe(true);
    expect(plan.changes).toEqual([]);
    expect(plan.reports.map((r) => r.rule)).toEqual(["fine"]);
  });

  it("without a catalog validate says in one line which checks it skipped", async () => {
    const cwd = await tmp();
    await writeFile(join(cwd, "bad.yaml"), BAD);
    const v = await runCli(["validate", "bad.yaml"], offline, { cwd });
    expect(v.code).toBe(0);
    expect(v.stderr.trim().split("\n")).toEqual([
      "note: no workflow catalog (flowrules.workflows.json): steps, fields and input values were not checked against the workflows; `flowrules pull` writes it",
    ]);
  });

  const BAD_CATALOGS: Array<[string, string, RegExp]> = [
    ["malformed", "{ not json", /workflow catalog flowrules\.workflows\.json is not valid JSON/],
    [
      "of another format_version",
      JSON.stringify({ format_version: 2, pulled_at: "x", base_url: "http://127.0.0.1:1/api", workflows: [] }),
      /has format_version 2; this flowrules reads 1; it is ignored/,
    ],
    [
      "of the wrong shape",
      JSON.stringify({ format_version: 1, pulled_at: "x", base_url: "b", workflows: [{ workflow: 3 }] }),
      /is malformed at workflows\.0\.workflow/,
    ],
    [
      "pulled from another base URL",
      JSON.stringify({ format_version: 1, pulled_at: "x", base_url: "http://127.0.0.1:1/api", workflows: [] }),
      /was pulled from http:\/\/127\.0\.0\.1:1\/api, not from http:\/\/127\.0\.0\.1:\d+\/api; it is ignored/,
    ],
  ];
  for (const [what, text, message] of BAD_CATALOGS) {
    it(`a catalog ${what} is named in a warning and ignored`, async () => {
      const cwd = await tmp();
      await writeFile(join(cwd, "flowrules.workflows.json"), text);
      await writeFile(join(cwd, "bad.yaml"), BAD);
      const v = await runCli(["validate", "bad.yaml"], { ...offline, FLOWRULES_BASE_URL: sb.baseUrl }, { cwd });
      expect(v.stderr).toMatch(message);
      expect(v.code).toBe(0);
      // plan warns too, and still refuses live what does not fit
      const p = await runCli(["plan", "bad.yaml", "-q"], env(), { cwd });
      expect(p.stderr).toMatch(message);
      expect(p.code).toBe(1);
    });
  }

  it('a rule over "*" is checked against every workflow of the catalog: a warning only where none has its names', async () => {
    const cwd = await tmp();
    const rule = (name: string, rest: string): string =>
      `  - name: ${name}\n    workflow: "*"\n    select: { status: [running] }\n${rest}`;
    const STAR = `version: 1
rules:
${rule("fits-one", "    fields: { amount: { step: Manager approval, action: Amount } }\n    when: fields.amount < 10\n    actions:\n      - complete_step: { step: Manager approval }\n")}${rule("misspelt-step", "    actions:\n      - complete_step: { step: Manger approval }\n")}${rule("misspelt-field", "    fields: { amount: { step: Manager approval, action: Amout } }\n    when: fields.amount < 10\n    actions: [abort]\n")}${rule("nowhere-together", "    fields: { q: { step: Request, action: Quantity } }\n    when: fields.q > 1\n    actions:\n      - complete_step: { step: Manager approval }\n")}`;
    await writeFile(join(cwd, "star.yaml"), STAR);
    // pull brings every workflow the key sees for a "*" rule
    expect((await runCli(["pull", "star.yaml"], env(), { cwd })).code).toBe(0);
    const v = await runCli(["validate", "star.yaml"], offline, { cwd });
    expect(v.code).toBe(0);
    // the structure warnings (these rules also may conflict, which is another warning)
    const warnings = v.stdout.split("\n").filter((l) => / warning /.test(l) && !l.includes("may conflict"));
    const n = WORKFLOWS.length;
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^star\\.yaml:14:32 +warning +rule "misspelt-step": actions\\[0\\]\\.complete_step\\.step: no workflow in flowrules\\.workflows\\.json \\(${n} workflows\\) has a step "Manger approval", so the rule would be skipped in every one; did you mean "Manager approval"\\?`,
        ),
      ),
      expect.stringMatching(
        /^star\.yaml:18:57 +warning +rule "misspelt-field": fields\.amount\.action: no workflow .* has a field "Amout" in a step "Manager approval", so the rule would be skipped in every one; did you mean "Amount"\?/,
      ),
      expect.stringMatching(
        /^star\.yaml:21:5 +warning +rule "nowhere-together": no workflow .* fits all of its steps, fields and values, so it would be skipped in every workflow; in workflow 1042 "Expense claim": fields\.q\.step: no step named "Request"/,
      ),
    ]);
    // the live plan agrees: the rules warned about are skipped in every workflow, the other one is not
    const p = await runCli(["plan", "star.yaml", "--format", "json"], env(), { cwd });
    const plan = JSON.parse(p.stdout) as {
      rules: Array<{ name: string; workflow_ids?: number[]; workflows_skipped?: Array<{ workflow_id: number }> }>;
    };
    const skipped = (name: string): number => plan.rules.find((r) => r.name === name)?.workflows_skipped?.length ?? 0;
    expect(skipped("fits-one")).toBe(n - 1);
    for (const name of ["misspelt-step", "misspelt-field", "nowhere-together"]) expect(skipped(name)).toBe(n);
  });

  it("--workflows FILE names the catalog elsewhere; a missing one is a warning", async () => {
    const cwd = await tmp();
    await writeFile(join(cwd, "bad.yaml"), BAD);
    expect((await runCli(["pull", "bad.yaml", "--workflows", "wf.json"], env(), { cwd })).code).toBe(0);
    const v = await runCli(["validate", "bad.yaml", "--workflows", "wf.json"], offline, { cwd });
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/field "Amout"/);
    const missing = await runCli(["validate", "bad.yaml", "--workflows", "nope.json"], offline, { cwd });
    expect(missing.stderr).toMatch(/workflow catalog nope\.json cannot be read \(ENOENT\); it is ignored/);
  });
});
