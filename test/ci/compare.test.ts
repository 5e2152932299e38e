/**
 * `plan --compare <ref>` on a temporary git repository against the sandbox: a threshold edit, an input edit, a removed
 * rule, an added rule and a moved file each give exactly the impact that two separate stateless plans (the tree at the
 * ref, the working tree) imply, worked out here from those two plans; and the compare run sends no more requests than
 * the larger of them (sandbox request log). Then the CLI: exit codes, one-line refusals, Markdown, apply of the file.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.js";
import { comparePlanCommand } from "../../src/commands/plan-compare.js";
import type { PlanCommandOptions } from "../../src/commands/plan.js";
import type { ComparePlan } from "../../src/engine/impact.js";
import { runPlan } from "../../src/engine/plan-live.js";
import { sameValue } from "../../src/model/values.js";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import { COMPARE_FORMATS } from "../../src/render/compare/index.js";
import { compileSources, loadRules, type RuleSource } from "../../src/rules/index.js";
import type { RuleSet } from "../../src/rules/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, connection, effectiveMutations, changeKey, runApply } from "../apply/helpers.js";
import { runCli } from "../helpers/cli.js";
import { tempRepo, type TempRepo } from "./git-repo.js";

const NOW = new Date("2026-11-01T12:00:00.000Z");

const approve = (threshold: number, text: string): string => `
  - name: approve-small-expenses
    workflow: 1042
    fields:
      amount: { step: Manager approval, action: Amount }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < ${threshold}
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "${text}" }
`;
const REPORT = `
  - name: expenses-by-status
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: status }
`;
const ABORT = `
  - name: abort-abandoned-onboardings
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P30D }
    actions: [abort]
`;
const NOTE = `
  - name: note-purchases
    workflow: 1044
    fields:
      quantity: { step: Request, action: Quantity }
    select: { status: [running], active_step_id: 20131 }
    when: fields.quantity > 3
    actions:
      - save_step:
          step: 20131
          inputs:
            - action: 50264
              value: { inputValue: "check the quantity" }
`;
const file = (...rules: string[]): string => `version: 1\nrules:${rules.join("")}`;
const BASE_FILES: Record<string, string> = {
  "rules/expenses.yaml": file(approve(100, "Approved"), REPORT),
  "rules/onboarding.yaml": file(ABORT),
};

let repo: TempRepo;
let sb: RunningSandbox;
let base: string;
const env = (): Record<string, string> => ({
  FLOWRULES_BASE_URL: sb.baseUrl,
  FLOWRULES_API_KEY: "sandbox-admin",
  FLOWRULES_RATE_LIMIT: "0",
});

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 3, now: NOW });
  repo = await tempRepo();
  for (const [path, text] of Object.entries(BASE_FILES)) await repo.write(path, text);
  base = await repo.commit("base");
});
afterAll(async () => {
  await sb?.close();
  if (repo) await rm(repo.dir, { recursive: true, force: true });
});

/** Back to the base commit, working tree and index, between scenarios. */
async function reset(): Promise<void> {
  await repo.git("reset", "-q", "--hard", base);
  await repo.git("clean", "-q", "-fd");
}

function compiled(sources: RuleSource[]): RuleSet {
  const loaded = compileSources(sources);
  if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => d.message).join("\n"));
  return loaded.ruleSet;
}

/** A stateless plan of a whole tree, and the requests it sent. */
async function plainPlan(ruleSet: RuleSet): Promise<{ plan: Plan; requests: number }> {
  const client = createClient({ baseUrl: sb.baseUrl, apiKey: "sandbox-admin", rateLimitPerMin: 0 });
  try {
    sb.clearRequests();
    const plan = await runPlan({ client, ruleSet, now: NOW });
    return { plan, requests: sb.requests().length };
  } finally {
    await client.close();
  }
}

/** The compare run in-process (same `now` as the two plans), JSON on stdout. */
async function compareRun(
  extra: Partial<PlanCommandOptions> = {},
): Promise<{ plan: ComparePlan; requests: number; code: number; stdout: string }> {
  const io = captureIO();
  sb.clearRequests();
  const opts: PlanCommandOptions = {
    paths: [join(repo.dir, "rules")],
    format: "json",
    detailedExitcode: true,
    rules: [],
    quiet: true,
    connection: connection(sb),
    now: NOW,
    compare: "main",
    ...extra,
  };
  const code = await comparePlanCommand(opts, io);
  const requests = sb.requests().length;
  return {
    plan: (opts.format === "json" ? JSON.parse(io.out()) : undefined) as ComparePlan,
    requests,
    code,
    stdout: io.out(),
  };
}

const key = (c: { kind: string; instance_id: number; step_id?: number }): string =>
  `${c.kind}:${c.instance_id}:${c.step_id ?? ""}`;

/** What two separate plans imply for one rule, worked out directly: changes new, gone, and kept writing other values. */
function implied(basePlan: Plan, headPlan: Plan, rule: string) {
  const old = new Map(basePlan.changes.filter((c) => c.rule === rule).map((c) => [key(c), c]));
  const now = new Map(headPlan.changes.filter((c) => c.rule === rule).map((c) => [key(c), c]));
  const changed: Array<{ key: string; before: Record<string, unknown>; after: Record<string, unknown> }> = [];
  for (const [k, c] of now) {
    const o = old.get(k);
    if (!o) continue;
    const inputs = [...new Set([...Object.keys(o.after), ...Object.keys(c.after)])].filter(
      (i) => !sameValue(o.after[i], c.after[i]),
    );
    if (inputs.length > 0)
      changed.push({
        key: k,
        before: Object.fromEntries(inputs.map((i) => [i, o.after[i]])),
        after: Object.fromEntries(inputs.map((i) => [i, c.after[i]])),
      });
  }
  // a change one version plans and the other's rollout limit defers (by instance: `rules[].deferred_ids`) is wanted
  // by both, only at another run
  const deferredBy = (plan: Plan): Set<number> => new Set(plan.rules.find((r) => r.name === rule)?.deferred_ids ?? []);
  const laterAtRef = deferredBy(basePlan);
  const laterNow = deferredBy(headPlan);
  const added = [...now.values()].filter((c) => !old.has(key(c)));
  const removed = [...old.values()].filter((c) => !now.has(key(c)));
  return {
    added: added.filter((c) => !laterAtRef.has(c.instance_id)),
    removed: removed.filter((c) => !laterNow.has(c.instance_id)),
    deferred: removed.filter((c) => laterNow.has(c.instance_id)),
    no_longer_deferred: added.filter((c) => laterAtRef.has(c.instance_id)),
    changed,
  };
}

const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Runs one scenario: the edit in the working tree, both stateless plans, the compare run; checks the impact and the request bound. */
async function scenario(edit: () => Promise<void>, expected: Array<{ rule: string; status: string }>) {
  await reset();
  try {
    const before = await plainPlan(compiled(Object.entries(BASE_FILES).map(([f, text]) => ({ file: f, text }))));
    expect(before.plan.errors).toEqual([]);
    await edit();
    const loaded = await loadRules([join(repo.dir, "rules")]);
    if (!loaded.ruleSet) throw new Error(loaded.diagnostics.map((d) => d.message).join("\n"));
    const after = await plainPlan(loaded.ruleSet);
    const compare = await compareRun();
    // the errors the working tree's plan has (here: conflicts of a touched rule with an untouched one), no other
    expect(compare.plan.errors).toEqual(json(after.plan.errors));
    expect(compare.plan.impact.map((i) => ({ rule: i.rule, status: i.status }))).toEqual(expected);
    for (const i of compare.plan.impact) {
      const want = implied(before.plan, after.plan, i.rule);
      expect(i.added).toEqual(json(want.added));
      expect(i.removed).toEqual(json(want.removed));
      expect(i.deferred ?? []).toEqual(json(want.deferred));
      expect(i.no_longer_deferred ?? []).toEqual(json(want.no_longer_deferred));
      expect(i.changed.map((c) => ({ key: key(c), before: c.before, after: c.after }))).toEqual(json(want.changed));
    }
    // the plan beside the impact is the working tree's plan of the touched rules
    const touched = new Set(expected.map((e) => e.rule));
    expect(compare.plan.changes).toEqual(json(after.plan.changes.filter((c: PlannedChange) => touched.has(c.rule))));
    expect(compare.requests).toBeLessThanOrEqual(Math.max(before.requests, after.requests));
    return { ...compare, before, after };
  } finally {
    await reset();
  }
}

const totals = (p: ComparePlan) => p.impact.map((i) => [i.added.length, i.removed.length, i.changed.length]);

describe("plan --compare: each edit gives the impact two separate plans imply", () => {
  it("a threshold edit: claims newly approved, none that still are written differently", async () => {
    const r = await scenario(
      () => repo.write("rules/expenses.yaml", file(approve(400, "Approved"), REPORT)),
      [{ rule: "approve-small-expenses", status: "edited" }],
    );
    expect(totals(r.plan)).toEqual([[expect.any(Number), 0, 0]]);
    expect(r.plan.impact[0]?.added.length).toBeGreaterThan(0);
    expect(r.code).toBe(2);
  });

  it("an input edit: the same claims, another value written, input by input", async () => {
    const r = await scenario(
      () => repo.write("rules/expenses.yaml", file(approve(100, "Approved by the rule"), REPORT)),
      [{ rule: "approve-small-expenses", status: "edited" }],
    );
    const [entry] = r.plan.impact;
    expect(entry?.added).toEqual([]);
    expect(entry?.removed).toEqual([]);
    expect(entry?.changed.length).toBeGreaterThan(0);
    for (const c of entry?.changed ?? []) {
      expect(Object.values(c.before)).toEqual(["Approved"]);
      expect(Object.values(c.after)).toEqual(["Approved by the rule"]);
    }
  });

  it("a rollout limit added, then raised: what it defers is deferred, not gone; what it no longer defers is not new", async () => {
    const limited = (n: number): string =>
      approve(400, "Approved").replace("    fields:", `    limits: { max_changes_per_run: ${n} }\n    fields:`);
    const r = await scenario(
      () => repo.write("rules/expenses.yaml", file(limited(2), REPORT)),
      [{ rule: "approve-small-expenses", status: "edited" }],
    );
    const [entry] = r.plan.impact;
    const deferredNow = r.after.plan.rules.find((x) => x.name === "approve-small-expenses")?.deferred ?? 0;
    expect(deferredNow).toBeGreaterThan(0);
    // every change the ref planned is either still planned or deferred: none is "no longer"
    expect(entry?.removed).toEqual([]);
    expect(entry?.deferred?.length).toBeGreaterThan(0);
    expect(r.code).toBe(2);

    // the other way: the ref defers (limit 2), the working tree's limit 100 plans them all this run
    await reset();
    try {
      await repo.write("rules/expenses.yaml", file(limited(2), REPORT));
      await repo.commit("limit 2");
      await repo.git("tag", "limited");
      await repo.write("rules/expenses.yaml", file(limited(100), REPORT));
      const t = await runCli(["plan", "rules", "--compare", "limited", "-q"], env(), { cwd: repo.dir });
      expect(t.stderr).toBe("");
      expect(t.stdout.split("\n")[0]).toBe(
        `approve-small-expenses (edited): +0 newly affected, -0 no longer, 0 write other values, ${deferredNow} no longer deferred`,
      );
      expect(t.stdout).toContain(`no longer deferred: planned this run, where the ref's rollout limit left them`);
    } finally {
      await repo.git("reset", "-q", "--hard", base);
      await repo.git("tag", "-d", "limited");
      await reset();
    }
  });

  it("a removed rule: every change it planned is no longer planned", async () => {
    const r = await scenario(
      () => repo.remove("rules/onboarding.yaml"),
      [{ rule: "abort-abandoned-onboardings", status: "removed" }],
    );
    expect(r.plan.impact[0]?.removed.length).toBeGreaterThan(0);
    expect(
      r.plan.impact[0]?.removed.every(
        (c) => c.rule === "abort-abandoned-onboardings" && c.id.startsWith("abort-abandoned-onboardings:"),
      ),
    ).toBe(true);
    expect(r.plan.changes).toEqual([]);
  });

  it("an added rule: every change it plans is new", async () => {
    const r = await scenario(
      () => repo.write("rules/purchases.yaml", file(NOTE)),
      [{ rule: "note-purchases", status: "added" }],
    );
    expect(r.plan.impact[0]?.added.length).toBeGreaterThan(0);
    expect(r.plan.compare.rules_at_ref).toEqual([]);
  });

  it("an added rule that clashes with an untouched one: the conflicts the whole plan has, and its impact without them", async () => {
    const CLASH = `
  - name: abort-cheap-claims
    workflow: 1042
    fields:
      amount: { step: Manager approval, action: Amount }
    select: { status: [running], active_step_id: 20111 }
    when: fields.amount < 50
    actions: [abort]
`;
    const r = await scenario(
      () => repo.write("rules/cheap.yaml", file(CLASH)),
      [{ rule: "abort-cheap-claims", status: "added" }],
    );
    expect(r.plan.errors.length).toBeGreaterThan(0);
    expect(r.plan.errors.every((e) => e.code === "conflict" && e.message.includes('"approve-small-expenses"'))).toBe(
      true,
    );
    // the untouched rule took part in the conflicts, and is neither shown nor saved in the plan
    expect(r.plan.rules.map((x) => x.name)).toEqual(["abort-cheap-claims"]);
    expect(r.code).toBe(1);
  });

  it("a renamed rule: the old name removed, the new one added", async () => {
    const r = await scenario(
      () =>
        repo.write(
          "rules/expenses.yaml",
          file(approve(100, "Approved").replace("approve-small-expenses", "approve-claims"), REPORT),
        ),
      [
        { rule: "approve-claims", status: "added" },
        { rule: "approve-small-expenses", status: "removed" },
      ],
    );
    expect(totals(r.plan)).toEqual([
      [expect.any(Number), 0, 0],
      [0, expect.any(Number), 0],
    ]);
    expect(r.plan.impact[0]?.added.length).toBeGreaterThan(0);
    expect(r.plan.impact[0]?.added.map(key)).toEqual(r.plan.impact[1]?.removed.map(key));
  });

  it("a file moved without edits: no impact, no request, exit 0", async () => {
    const r = await scenario(async () => {
      await repo.git("mv", "rules/onboarding.yaml", "rules/people.yaml");
    }, []);
    expect(r.plan.impact).toEqual([]);
    expect(r.requests).toBe(0);
    expect(r.code).toBe(0);
    expect(r.plan.compare).toMatchObject({ ref: "main", commit: base, unchanged: 3 });
  });
});

describe("plan --compare: the CLI", () => {
  it("text leads with one line per touched rule; --detailed-exitcode 2 on impact, 0 without", async () => {
    await reset();
    try {
      await repo.write("rules/expenses.yaml", file(approve(400, "Approved"), REPORT));
      await repo.remove("rules/onboarding.yaml");
      const r = await runCli(["plan", "rules", "--compare", "main", "--detailed-exitcode", "-q"], env(), {
        cwd: repo.dir,
      });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(2);
      const lines = r.stdout.split("\n");
      expect(lines[0]).toMatch(
        /^approve-small-expenses \(edited\): \+\d+ newly affected, -0 no longer, 0 write other values$/,
      );
      expect(lines[1]).toMatch(
        /^abort-abandoned-onboardings \(removed\): \+0 newly affected, -\d+ no longer, 0 write other values$/,
      );
      expect(r.stdout.trimEnd().split("\n").pop()).toMatch(
        /^Impact since main \([0-9a-f]{12}\): 2 rules touched, .*; 1 unchanged rule not planned\.$/,
      );

      // the key is in no output, log event or plan file
      const logged = await runCli(
        ["plan", "rules", "--compare", "main", "--log-format", "json", "--format", "html", "--out", "compare.json"],
        env(),
        { cwd: repo.dir },
      );
      expect(logged.code).toBe(0);
      expect(logged.stderr).toContain('"event":"rule.impact"');
      expect(`${logged.stdout}${logged.stderr}${await readFile(join(repo.dir, "compare.json"), "utf8")}`).not.toContain(
        "sandbox-admin",
      );

      const none = await runCli(["plan", "rules", "--compare", "HEAD", "--detailed-exitcode", "-q"], env(), {
        cwd: repo.dir,
      });
      expect(none.code).toBe(2); // the working tree still differs from HEAD
      await reset();
      const clean = await runCli(["plan", "rules", "--compare", "HEAD", "--detailed-exitcode", "-q"], env(), {
        cwd: repo.dir,
      });
      expect(clean.code).toBe(0);
      expect(clean.stdout).toContain("no rule was added, edited or removed");
    } finally {
      await reset();
    }
  });

  it("an unknown ref, and --compare with --changed-since or --shard, are one-line errors", async () => {
    const r = await runCli(["plan", "rules", "--compare", "origin/nope"], env(), { cwd: repo.dir });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^flowrules: --compare: unknown git ref "origin\/nope"/);
    for (const extra of [
      ["--changed-since", "main"],
      ["--shard", "0/2"],
    ]) {
      const c = await runCli(["plan", "rules", "--compare", "main", ...extra], env(), { cwd: repo.dir });
      expect(c.code).toBe(1);
      expect(c.stderr.trim().split("\n")).toHaveLength(1);
      expect(c.stderr).toMatch(new RegExp(`^flowrules: --compare.*${extra[0]}`));
    }
  });

  it("rules at the ref that do not validate: one line naming the file, line and column there", async () => {
    await reset();
    try {
      await repo.write(
        "rules/expenses.yaml",
        file(approve(100, "Approved"), REPORT).replace(
          "workflow: 1042\n    fields",
          "workflow: 1042\n    bogus: 1\n    fields",
        ),
      );
      await repo.commit("broken");
      await repo.git("tag", "-f", "broken");
      await repo.git("reset", "-q", "--hard", base);
      await repo.write("rules/expenses.yaml", file(approve(200, "Approved"), REPORT));
      await expect(compareRun({ compare: "broken" })).rejects.toThrow(
        /^--compare: the rules at broken do not validate, so they cannot be compared: \S*rules\/expenses\.yaml:5:5\s.*bogus/,
      );
    } finally {
      await repo.git("tag", "-d", "broken");
      await reset();
    }
  });

  it("--rule narrows the comparison, a removed rule included; a name on neither side is an error", async () => {
    await reset();
    try {
      await repo.write("rules/expenses.yaml", file(approve(400, "Approved"), REPORT));
      await repo.remove("rules/onboarding.yaml");
      const r = await compareRun({ rules: ["abort-abandoned-onboardings"] });
      expect(r.plan.impact.map((i) => i.rule)).toEqual(["abort-abandoned-onboardings"]);
      await expect(compareRun({ rules: ["no-such-rule"] })).rejects.toThrow(
        /--rule names no rule at main or in the working tree: no-such-rule/,
      );
    } finally {
      await reset();
    }
  });

  it("Markdown leads with the lines and stays within the comment limit, saying what was left out", async () => {
    await reset();
    try {
      await repo.write("rules/expenses.yaml", file(approve(100_000, "Approved by the rule"), REPORT));
      const r = await compareRun();
      const plan = r.plan;
      expect(plan.impact[0]?.added.length).toBeGreaterThan(10);
      const full = COMPARE_FORMATS.markdown(plan, { color: false });
      expect(full).toMatch(
        /^## flowrules plan --compare `main`\n\n- approve-small-expenses \(edited\): \+\d+ newly affected, -0 no longer, \d+ write other values\n\n\*\*Impact since main/,
      );
      const small = COMPARE_FORMATS.markdown(plan, { color: false, maxChars: 2500, planFile: "plan.json" });
      expect(small.length).toBeLessThanOrEqual(2500);
      expect(small).toMatch(
        /\d+ of \d+ impact entries left out to stay under the 2,500-character comment limit; all of them are in `plan.json`/,
      );
      // a change touching thousands of rules: the lead lines give way too, and the comment still fits
      const first = plan.impact[0];
      if (!first) throw new Error("no impact to repeat");
      const many = { ...plan, impact: Array.from({ length: 3000 }, (_, n) => ({ ...first, rule: `rule-${n}` })) };
      const capped = COMPARE_FORMATS.markdown(many, { color: false, maxChars: 20_000 });
      expect(capped.length).toBeLessThanOrEqual(20_000);
      expect(capped).toMatch(/\n- … \d+ more touched rules in /);
      const html = COMPARE_FORMATS.html(plan, { color: false });
      expect(html.indexOf("approve-small-expenses (edited): +")).toBeLessThan(html.indexOf("data-change-id"));
      // steps and fields named beside their ids in every view, and the footer names the profile that chose the service
      expect(full).toMatch(
        /^\+ #\d+ "[^"]*": complete step 20111 "Manager approval"\n\+ {5}step 20111 "Manager approval": "completed"\n\+ {5}Manager comment \(50230\): "Approved by the rule"$/m,
      );
      expect(html).toContain("complete step 20111 &#34;Manager approval&#34;");
      const profiled = { ...plan, profile: "sandbox" };
      expect(COMPARE_FORMATS.markdown(profiled, { color: false })).toMatch(
        /against http:\/\/127\.0\.0\.1:\d+\/api \(profile sandbox\) by flowrules/,
      );
      const text = COMPARE_FORMATS.text(profiled, { color: false });
      expect(text).toMatch(/planned against http:\/\/127\.0\.0\.1:\d+\/api \(profile sandbox\) at /);
      expect(text).toMatch(
        /\+ #\d+ "[^"]*": complete step 20111 "Manager approval"\n {8}step 20111 "Manager approval": "completed"\n {8}Manager comment \(50230\): "Approved by the rule"/,
      );
    } finally {
      await reset();
    }
  });

  it("the plan file of a compare run applies the working tree's touched rules, each change once", async () => {
    await reset();
    const dir = await mkdtemp(join(tmpdir(), "flowrules-compare-"));
    try {
      await repo.write("rules/expenses.yaml", file(approve(400, "Approved"), REPORT));
      const out = join(dir, "plan.json");
      const r = await compareRun({ out });
      const saved = JSON.parse(await readFile(out, "utf8")) as ComparePlan & { digest: string };
      expect(saved.impact).toEqual(r.plan.impact);
      expect(saved.changes.length).toBeGreaterThan(0);
      // `show` renders the saved file with its impact first, at no request; the same document again as JSON
      sb.clearRequests();
      const shown = await runCli(["show", out], {}, { cwd: dir });
      expect(shown.code).toBe(0);
      expect(shown.stdout.split("\n")[0]).toMatch(
        /^approve-small-expenses \(edited\): \+\d+ newly affected, -0 no longer, 0 write other values$/,
      );
      const again = await runCli(["show", out, "--format", "json"], {}, { cwd: dir });
      expect(JSON.parse(again.stdout)).toEqual(saved);
      expect(sb.requests()).toHaveLength(0);
      // the digest covers the impact: an edited impact is refused
      const tampered = join(dir, "tampered.json");
      await writeFile(tampered, JSON.stringify({ ...saved, impact: [] }, null, 2));
      const refused = await runCli(["show", tampered], {}, { cwd: dir });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/does not match its digest/);
      sb.clearRequests();
      const io = captureIO();
      const code = await runApply(sb, dir, { paths: [out] }, io);
      expect(io.err()).not.toMatch(/not applying|refus/i);
      expect(code).toBe(2);
      const sent = effectiveMutations(sb);
      expect([...sent.keys()].sort()).toEqual(saved.changes.map(changeKey).sort());
      expect([...sent.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await reset();
    }
  });
});
