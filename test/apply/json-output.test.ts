/**
 * `apply --format json` and `test --format json`: real outputs (the sandbox over loopback; the built CLI for the
 * stdout contract) validated by ajv against the committed schemas in schemas/, which must equal the generated ones.
 * Outcomes covered: applied, stale, failed, skipped (audit), deferred, and nothing to apply; passing and failing
 * rule tests and a file that does not load.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { resultSchemaText, RESULT_SCHEMA_FILES } from "../../src/render/write-schemas.js";
import { writePlanFile } from "../../src/plan/write.js";
import { runCli } from "../helpers/cli.js";
import { captureIO, makePlan, MIXED_RULES, runApply, tempDir } from "./helpers.js";

type SchemaFile = keyof typeof RESULT_SCHEMA_FILES;

const ajv = new Ajv2020Module.default({ allErrors: true, strict: true });
const committed = async (file: SchemaFile): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
let validateApply: ValidateFunction;
let validateTests: ValidateFunction;

interface ApplyDoc {
  status: string;
  base_url: string;
  plan_file: string | null;
  summary: Record<string, number>;
  requests: { total: number; get: number; post: number };
  changes: Array<{ id: string; status: string; reason?: string; kind: string }>;
}

/** stdout must be exactly one JSON document that the schema accepts. */
function parsedValid(stdout: string, validate: ValidateFunction): unknown {
  const doc = JSON.parse(stdout) as unknown;
  const ok = validate(doc);
  expect(ok, JSON.stringify(validate.errors)).toBe(true);
  return doc;
}

function statusCounts(doc: ApplyDoc): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of doc.changes) out[c.status] = (out[c.status] ?? 0) + 1;
  return out;
}

const dirs: string[] = [];
let sb: RunningSandbox | undefined;

beforeAll(async () => {
  validateApply = ajv.compile(await committed("schemas/apply-result.schema.json"));
  validateTests = ajv.compile(await committed("schemas/test-results.schema.json"));
});
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function dir(): Promise<string> {
  const d = await tempDir();
  dirs.push(d);
  return d;
}

describe("result schemas", () => {
  it.each(Object.keys(RESULT_SCHEMA_FILES) as SchemaFile[])("%s is up to date (npm run schema)", async (file) => {
    expect(await readFile(file, "utf8")).toBe(resultSchemaText(file));
  });
});

const AUDITED = `${MIXED_RULES}
  - name: audit-onboardings
    mode: audit
    workflow: 1043
    select: { status: [running] }
    actions: [abort]
`.replace(
  / {2}- name: abort-onboardings\n {4}workflow: 1043\n {4}select: \{ status: \[running\] \}\n {4}actions: \[abort\]\n/,
  "",
);

describe("apply --format json", () => {
  it("applied, stale, failed and skipped (audit) changes: one valid document whose counts match its changes", async () => {
    sb = await startSandbox({ port: 0, instances: 200, seed: 17 });
    const d = await dir();
    const { plan } = await makePlan(sb, d, AUDITED);
    const steps = plan.changes.filter((c) => c.kind === "complete_step");
    const [staleOne, failOne] = steps;
    if (!staleOne || !failOne) throw new Error("the plan has too few complete_step changes");
    expect(plan.changes.some((c) => c.audit === true)).toBe(true);
    // a change the service refuses: an input action that is not of the step (answered 400)
    const edited = {
      ...plan,
      changes: plan.changes.map((c) =>
        c.id === failOne.id
          ? {
              ...c,
              request: {
                ...c.request,
                body: {
                  ...(c.request.body as Record<string, unknown>),
                  actions: [{ action_id: 99999, input_object: { inputValue: "x" } }],
                },
              },
              // `after` shows what the body sends (a body alone edited is refused before any request, issue 28)
              after: {
                ...Object.fromEntries(Object.entries(c.after).filter(([k]) => k.startsWith("step "))),
                "action 99999": "x",
              },
            }
          : c,
      ),
    };
    const file = join(d, "edited.json");
    await writePlanFile(file, edited);
    // an outside edit after the plan: that change is stale
    sb.store.update(staleOne.instance_id, (i) => void i.tags.push("edited-after-plan"));

    sb.clearRequests();
    const io = captureIO();
    const code = await runApply(sb, d, { paths: [file], format: "json", detailedExitcode: false }, io);
    expect(code).toBe(1);
    const doc = parsedValid(io.out(), validateApply) as ApplyDoc;
    expect(doc.status).toBe("incomplete");
    expect(doc.base_url).toBe(sb.baseUrl);
    const byId = new Map(doc.changes.map((c) => [c.id, c]));
    expect(byId.get(staleOne.id)?.status).toBe("stale");
    expect(byId.get(failOne.id)?.status).toBe("failed");
    expect(byId.get(failOne.id)?.reason).toMatch(/400/);
    const audited = plan.changes.filter((c) => c.audit === true);
    for (const a of audited) expect(byId.get(a.id)?.status).toBe("skipped");
    // every planned change once, and the summary counts what the list says
    expect(doc.changes.map((c) => c.id).sort()).toEqual(plan.changes.map((c) => c.id).sort());
    const counts = statusCounts(doc);
    expect(counts.applied).toBe(plan.changes.length - audited.length - 2);
    for (const s of ["applied", "stale", "failed", "skipped"]) expect(doc.summary[s], s).toBe(counts[s] ?? 0);
    expect(doc.summary.planned).toBe(plan.changes.length - audited.length);
    const posts = sb.requests().filter((r) => r.method === "POST").length;
    expect(doc.requests.post).toBe(posts);
    expect(doc.requests.total).toBe(sb.requests().length);
  });

  it("deferred: a run with no time left defers every change, valid and counted", async () => {
    sb = await startSandbox({ port: 0, instances: 120, seed: 18 });
    const d = await dir();
    const { file, plan } = await makePlan(sb, d, MIXED_RULES);
    const io = captureIO();
    expect(await runApply(sb, d, { paths: [file], format: "json", maxDurationMs: 0 }, io)).toBe(0);
    const doc = parsedValid(io.out(), validateApply) as ApplyDoc;
    expect(doc.status).toBe("stopped_at_time_limit");
    expect(doc.summary.deferred).toBe(plan.changes.length);
    expect(new Set(doc.changes.map((c) => c.status))).toEqual(new Set(["deferred"]));
    expect(sb.requests().filter((r) => r.method === "POST")).toHaveLength(0);
  });

  it("the built CLI: apply plan.json --format json prints only the document; nothing to apply is a document too", async () => {
    sb = await startSandbox({ port: 0, instances: 120, seed: 19 });
    const d = await dir();
    const { file, plan } = await makePlan(sb, d, MIXED_RULES);
    const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
    const r = await runCli(["apply", file, "--format", "json"], env, { cwd: d });
    expect(r.code).toBe(0);
    const doc = parsedValid(r.stdout, validateApply) as ApplyDoc;
    expect(doc.status).toBe("complete");
    expect(doc.summary.applied).toBe(plan.changes.length);
    expect(r.stdout + r.stderr).not.toContain("sandbox-admin");

    const none = join(d, "none");
    await mkdir(none);
    await writeFile(
      join(none, "rules.yaml"),
      "version: 1\nrules:\n  - { name: nothing, workflow: 1042, select: { status: [running], name: no-such-name-at-all }, actions: [abort] }\n",
    );
    const n = await runCli(["apply", none, "--auto-approve", "--format", "json", "-q"], env, { cwd: d });
    expect(n.stderr).toBe("");
    expect(n.code).toBe(0);
    const empty = parsedValid(n.stdout, validateApply) as ApplyDoc;
    expect(empty).toMatchObject({ status: "nothing_to_apply", plan_file: null, changes: [] });

    // a plan edited after it was planned is refused before any request: still one document, saying why
    const tampered = join(d, "tampered.json");
    const text = await readFile(file, "utf8");
    await writeFile(
      tampered,
      text.replace(/"instance_id": (\d+)/, (_m, id: string) => `"instance_id": ${Number(id) + 1}`),
    );
    sb.clearRequests();
    const refused = await runCli(["apply", tampered, "--format", "json"], env, { cwd: d });
    expect(refused.code).toBe(1);
    const why = parsedValid(refused.stdout, validateApply) as ApplyDoc & { error?: string };
    expect(why).toMatchObject({ status: "not_applied", plan_file: null, changes: [] });
    expect(why.error).toMatch(/tampered\.json is not a valid plan/);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(sb.requests()).toHaveLength(0);
    expect(refused.stdout + refused.stderr).not.toContain("sandbox-admin");
  });
});

const RULE = `version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111, inputs: [ { action: 50230, value: { inputValue: "Approved" } } ] }
`;

const TESTS = `version: 1
now: "2025-03-03T09:00:00Z"
tests:
  - name: approves a claim waiting on the manager
    rule: approve-expenses
    instances: [ { id: 1, active_step: 20111 } ]
    expect: { matched: [1] }
  - name: wrongly expects a finished claim to match
    rule: approve-expenses
    instances: [ { id: 2, status: completed, active_step: 20111 } ]
    expect: { matched: [2] }
`;

describe("test --format json", () => {
  it("passing and failing cases: one valid document, exit 1, counts and failures as the text says", async () => {
    const d = await dir();
    await writeFile(join(d, "rules.yaml"), RULE);
    await writeFile(join(d, "rules.test.yaml"), TESTS);
    const r = await runCli(["test", d, "--format", "json"], {});
    expect(r.code).toBe(1);
    const doc = parsedValid(r.stdout, validateTests) as {
      ok: boolean;
      passed: number;
      failed: number;
      results: Array<{
        name: string;
        status: string;
        line: number;
        failures: Array<{ subject: string; instance?: number }>;
      }>;
    };
    expect(doc).toMatchObject({ ok: false, passed: 1, failed: 1 });
    expect(doc.results.map((x) => x.status)).toEqual(["pass", "fail"]);
    expect(doc.results[1]?.failures[0]?.instance).toBe(2);
    expect(doc.results[1]?.line).toBeGreaterThan(0);

    const pass = await runCli(["test", d, "--format", "json", "--rule", "approve-*"], {});
    const one = JSON.parse(pass.stdout) as { ok: boolean };
    expect(one.ok).toBe(false); // the failing case is of the same rule: still run

    await writeFile(join(d, "rules.test.yaml"), TESTS.split("  - name: wrongly")[0] ?? "");
    const ok = await runCli(["test", d, "--format", "json"], {});
    expect(ok.code).toBe(0);
    expect(parsedValid(ok.stdout, validateTests)).toMatchObject({ ok: true, passed: 1, failed: 0 });
  });

  it("a rule file that does not load: its diagnostic at file:line:col in the document, exit 1", async () => {
    const d = await dir();
    await writeFile(join(d, "rules.yaml"), `${RULE}    when: fields.nope > 1\n`);
    await writeFile(join(d, "rules.test.yaml"), TESTS);
    const r = await runCli(["test", d, "--format", "json"], {});
    expect(r.code).toBe(1);
    const doc = parsedValid(r.stdout, validateTests) as {
      ok: boolean;
      diagnostics: Array<{ file: string; line: number; severity: string; message: string }>;
    };
    expect(doc.ok).toBe(false);
    const err = doc.diagnostics.find((x) => x.severity === "error");
    expect(err?.file).toContain("rules.yaml");
    expect(err?.line).toBe(8); // the appended `when:` line
    expect(err?.message).toContain("nope");
  });
});
