/** How audit changes, exclusions and inactive rules show in plans and notifications, and the CLI's refusals. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markdown } from "../../src/render/plan/markdown.js";
import { text } from "../../src/render/plan/text.js";
import { applyPayload } from "../../src/render/notify/payload.js";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import type { ChangeOutcome } from "../../src/apply/outcome.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir, writeRules } from "../apply/helpers.js";

function change(id: number, audit: boolean): PlannedChange {
  return {
    id: `r:abort:${id}`,
    rule: audit ? "watch" : "enforce",
    instance_id: id,
    instance_name: `I${id}`,
    process_id: 1043,
    kind: "abort",
    request: { method: "POST", path: "/instances/bulk/abort", body: { ids: [id] } },
    before: { status: "running" },
    after: { status: "aborted" },
    precondition: { status: "running" },
    ...(audit ? { audit: true } : {}),
  };
}

const plan: Plan = {
  format_version: 1,
  flowrules_version: "0",
  created_at: "2026-11-04T12:00:00.000Z",
  base_url: "https://host/api",
  rules_digest: "x",
  rules: [
    { name: "enforce", workflow_id: 1043, selected: 5, matched: 1, changes: 1, skipped: 0, excluded: 4, status: "ok" },
    { name: "watch", workflow_id: 1043, selected: 1, matched: 1, changes: 1, skipped: 0, status: "ok" },
    {
      name: "weekends",
      workflow_id: 1042,
      selected: 0,
      matched: 0,
      changes: 0,
      skipped: 0,
      status: "inactive",
      reason: "outside its active window: active on sat, sun only",
      next_active_at: "2026-11-07T00:00:00.000Z",
    },
  ],
  changes: [change(1, false), change(2, true)],
  reports: [],
  errors: [],
  summary: { abort: 2, complete_step: 0, save_step: 0, reports: 0, errors: 0 },
};

describe("plan views", () => {
  it("Markdown shows the audit changes, the exclusions and the inactive rule to reviewers", () => {
    const md = markdown(plan, { color: false });
    expect(md).toContain("| `enforce` | 1043 | 5 | 1 | 1 | ok (4 excluded) |");
    expect(md).toContain("| `watch` | 1043 | 1 | 1 | 1 | ok (audit) |");
    expect(md).toContain("inactive: outside its active window: active on sat, sun only");
    expect(md).toMatch(/Rollout: 1 change in \*\*audit\*\*.*4 instances \*\*excluded\*\*/);
    expect(md).toContain("#2 I2: abort (audit: not applied) @@");
    expect(md).not.toContain("#1 I1: abort (audit");
  });

  it("text marks each audit change and the rule", () => {
    const t = text(plan, { color: false });
    expect(t).toMatch(/Rule watch .*\[audit: not applied\]/);
    expect(t).toMatch(/#2 "I2": abort \(audit\)/);
    expect(t).toMatch(/Rule enforce .*4 excluded/);
    expect(t).toMatch(/Rule weekends .*INACTIVE, outside its active window/);
  });
});

describe("apply notification text", () => {
  it("calls out stale, failed and deferred changes before the rules, and counts audit apart", () => {
    const outcomes: ChangeOutcome[] = [
      { change: change(1, false), status: "applied" },
      { change: change(3, false), status: "stale", reason: "changed since the plan" },
      { change: change(4, false), status: "failed", reason: "answered 400" },
      { change: change(5, false), status: "not_started", reason: "interrupted" },
    ];
    const p = applyPayload(
      { plan, outcomes, audit: 1, planFile: "plan.json", journalFile: "plan.json.journal.jsonl" },
      { startedAt: new Date(0), finishedAt: new Date(1000) },
    );
    expect(p.summary).toMatchObject({ applied: 1, stale: 1, failed: 1, deferred: 1, audit: 1 });
    const lines = p.text.split("\n");
    expect(lines[0]).toMatch(/incomplete: 1 applied, 1 stale, 1 failed, 1 deferred .*1 audit change not sent/);
    const at = (s: string): number => lines.findIndex((l) => l.startsWith(s));
    expect(at("Stale:")).toBeGreaterThan(0);
    expect(at("Failed:")).toBeGreaterThan(at("Stale:"));
    expect(at("Deferred")).toBeGreaterThan(at("Failed:"));
    expect(at("• enforce:")).toBeGreaterThan(at("Deferred"));
    expect(lines.at(-1)).toBe("Journal: plan.json.journal.jsonl");
  });
});

describe("the CLI refuses bad operating settings before any request", () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, instances: 50, seed: 2 });
  });
  afterAll(async () => {
    await sb.close();
  });

  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [["--notify", "not a url"], {}, /--notify: "not a url" is not a URL/],
    [[], { FLOWRULES_NOTIFY_URL: "http://hooks.example.com/x" }, /plain http:\/\/ to hooks.example.com/],
    [["--opt-out-tag", "a,b"], {}, /--opt-out-tag "a,b": a tag cannot hold a comma/],
    [
      [],
      { FLOWRULES_OPT_OUT_TAG: " padded" },
      /FLOWRULES_OPT_OUT_TAG " padded": a tag cannot start or end with spaces/,
    ],
  ];
  for (const [flags, env, message] of cases) {
    it(`plan ${flags.join(" ") || Object.keys(env).join(" ")}: exit 1, one line, no request`, async () => {
      const dir = await tempDir();
      const file = await writeRules(dir, "version: 1\nrules:\n  - name: r\n    workflow: 1043\n    actions: [abort]\n");
      sb.clearRequests();
      const r = await runCli(["plan", file, ...flags], {
        FLOWRULES_BASE_URL: sb.baseUrl,
        FLOWRULES_API_KEY: "sandbox-admin",
        ...env,
      });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(sb.requests()).toHaveLength(0);
    });
  }
});

describe("rule tests", () => {
  it("a failing expectation on an excluded instance says which exclusion applied", async () => {
    const { testCommand } = await import("../../src/commands/test.js");
    const { captureIO: capture, tempFiles } = await import("../rule-tests/helpers.js");
    const dir = await tempFiles({
      "r.yaml":
        "version: 1\nrules:\n  - name: r\n    workflow: 1043\n    mode: audit\n    exclude: { tags: [legal-hold] }\n    actions: [abort]\n",
      "r.test.yaml":
        'version: 1\nnow: "2026-01-07T10:00:00Z"\ntests:\n  - name: held\n    rule: r\n    instances:\n      - { id: 1, name: A }\n      - { id: 2, name: B, tags: [legal-hold] }\n' +
        "    expect:\n      changes:\n        - { instance: 1, kind: abort, audit: true }\n        - { instance: 2, kind: abort, audit: true }\n",
    });
    const c = capture();
    const code = await testCommand({ paths: [dir], requireTests: false }, c.io);
    expect(code).toBe(1);
    expect(c.out()).toContain(
      'instance is excluded: it carries the tag "legal-hold" listed in the rule\'s exclude.tags',
    );
    expect(c.out()).not.toMatch(/instance 1 "A"/);
  });
});
