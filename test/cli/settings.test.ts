/**
 * One settings model (issue 27): every planning flag is accepted by `plan` and `apply --auto-approve` and plans the
 * same (through the built CLI, against the sandbox over HTTP); flags, environment, profile and defaults are resolved
 * in DESIGN.md section 13's order.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { PLANNING_FLAGS } from "../../src/cli/flags.js";
import { runSettings } from "../../src/cli/settings.js";
import { DEFAULT_OPT_OUT_TAG, DEFAULT_RATE_LIMIT, sendRatePerMin, WINDOW_SHARE } from "../../src/model/settings.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli, type CliResult } from "../helpers/cli.js";
import { tempRepo, type TempRepo } from "../ci/git-repo.js";

const KEY = "sandbox-admin";
const NOW = new Date("2026-06-10T12:00:00Z");

const RULES = `
version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111, inputs: [{ action: 50230, value: { inputValue: "ok" } }] }
  - name: abort-onboardings
    workflow: 1043
    select: { status: [running] }
    actions: [abort]
`;

/** A second version of the rules: one rule edited, so --changed-since has something to narrow to. */
const RULES_EDITED = RULES.replace('inputValue: "ok"', 'inputValue: "approved"');

interface PlanJson {
  created_at: string;
  rules: Array<{ name: string; excluded?: number }>;
  changes: Array<{ instance_id: number; rule: string }>;
  changed_since?: unknown;
}

/** The plan as compared: its creation time (and values taken from it) and digest aside. */
/** A plan as both verbs must agree on it: its creation time aside, and the request count (a state saves requests). */
function comparable(text: string): unknown {
  const p = JSON.parse(text) as PlanJson & { digest?: string; summary: Record<string, unknown> };
  const { digest: _digest, summary, ...rest } = p;
  const { requests: _requests, ...counts } = summary;
  // what each plan saw of an instance is bounded by its own clock (src/engine/seen.ts): the bound, not the change
  const changes = (rest.changes as Array<{ precondition?: Record<string, unknown> }>).map((c) => {
    const { last_updated_before: _seen, ...precondition } = c.precondition ?? {};
    return { ...c, precondition };
  });
  return JSON.parse(
    JSON.stringify({ ...rest, changes, summary: counts })
      .split(p.created_at)
      .join("<created_at>"),
  );
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ sb: RunningSandbox; repo: TempRepo; env: Record<string, string> }> {
  const sb = await startSandbox({ port: 0, instances: 120, seed: 7, now: NOW });
  const repo = await tempRepo();
  cleanups.push(
    () => sb.close(),
    () => rm(repo.dir, { recursive: true, force: true }),
  );
  await repo.write("rules/rules.yaml", RULES);
  await repo.commit("rules");
  await repo.write("rules/rules.yaml", RULES_EDITED);
  return { sb, repo, env: { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: KEY, FLOWRULES_RATE_LIMIT: "0" } };
}

/** `plan --out` and then `apply --auto-approve` with the same extra flags; both plans as the files hold them. */
async function planBothWays(
  args: string[],
): Promise<{ plan: CliResult; apply: CliResult; planned?: string; applied?: string }> {
  const { repo, env } = await setup();
  const plan = await runCli(["plan", "rules", "--out", "plan.json", ...args], env, { cwd: repo.dir });
  const apply = await runCli(["apply", "rules", "--auto-approve", ...args], env, { cwd: repo.dir });
  const planned = plan.code === 0 ? await readFile(join(repo.dir, "plan.json"), "utf8") : undefined;
  const runs = apply.code === 0 || apply.code === 2 ? await readdir(join(repo.dir, ".flowrules", "runs")) : [];
  const applied = runs[0]
    ? await readFile(join(repo.dir, ".flowrules", "runs", runs[0], "plan.json"), "utf8")
    : undefined;
  return { plan, apply, ...(planned ? { planned } : {}), ...(applied ? { applied } : {}) };
}

/**
 * One sample per planning flag and what it must visibly do. Keyed by the flags of PLANNING_FLAGS: a flag added
 * there without a line here fails the first test.
 */
const SAMPLES: Record<string, { args: string[]; effect: (plan: PlanJson, stderr: string) => void }> = {
  "--rule": {
    args: ["--rule", "abort-onboardings"],
    effect: (p) => expect(p.rules.map((r) => r.name)).toEqual(["abort-onboardings"]),
  },
  "--shard": {
    args: ["--shard", "1/3"],
    effect: (p) => {
      expect(p.changes.length).toBeGreaterThan(0);
      expect(p.changes.every((c) => c.instance_id % 3 === 1)).toBe(true);
    },
  },
  "--changed-since": {
    args: ["--changed-since", "HEAD"],
    effect: (p) => {
      expect(p.rules.map((r) => r.name)).toEqual(["approve-expenses"]);
      expect(p.changed_since).toMatchObject({ ref: "HEAD", changed: ["approve-expenses"] });
    },
  },
  "--explain-requests": {
    args: ["--explain-requests"],
    effect: (_p, stderr) => expect(stderr).toMatch(/^requests: workflow 104\d, /m),
  },
  "--opt-out-tag": {
    args: ["--opt-out-tag", "expenses"],
    effect: (p) => expect(p.rules.find((r) => r.name === "approve-expenses")?.excluded ?? 0).toBeGreaterThan(0),
  },
  "--workflows": {
    // an explicit catalog that is missing is read, and warned about, by both
    args: ["--workflows", "missing.workflows.json"],
    effect: (_p, stderr) => expect(stderr).toMatch(/^warning: .*missing\.workflows\.json/m),
  },
  // plan writes the state, apply then plans from it: equal plans are the state's own contract (test/state/)
  "--state": {
    args: ["--state", "state"],
    effect: (_p, stderr) => expect(stderr).toMatch(/^state: [\d,]+ instances from the state, [\d,]+ read again$/m),
  },
  "--resync-after": {
    args: ["--state", "state", "--resync-after", "1h"],
    effect: (_p, stderr) => expect(stderr).toMatch(/^state: [\d,]+ instances from the state/m),
  },
  "--full-refresh": {
    args: ["--state", "state", "--full-refresh"],
    effect: (_p, stderr) => expect(stderr).toMatch(/^state: 0 instances from the state, [\d,]+ read again$/m),
  },
  // a run that completes makes an ordinary plan: --partial marks only a sync cut by plan --max-duration
  // (test/state/partial-cli.test.ts)
  "--partial": {
    args: ["--state", "state", "--partial"],
    effect: (p) => {
      expect((p as { partial?: unknown }).partial).toBeUndefined();
      expect(p.rules.length).toBeGreaterThan(0);
    },
  },
};

describe("planning flags: plan and apply --auto-approve", () => {
  const flags = Object.values(PLANNING_FLAGS).flatMap((s) => (s.flags ? [s.flags.split(" ")[0] ?? ""] : []));

  it("every planning flag of the settings model has a sample here", () => {
    expect(flags.sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  for (const [flag, sample] of Object.entries(SAMPLES)) {
    it(`${flag}: both verbs accept it and plan the same`, async () => {
      const r = await planBothWays(sample.args);
      expect(r.plan.code, r.plan.stderr).toBe(0);
      expect([0, 2], r.apply.stderr).toContain(r.apply.code);
      expect(r.planned).toBeDefined();
      expect(r.applied).toBeDefined();
      expect(comparable(r.applied ?? "")).toEqual(comparable(r.planned ?? ""));
      const plan = JSON.parse(r.planned ?? "{}") as PlanJson;
      sample.effect(plan, r.plan.stderr);
      sample.effect(JSON.parse(r.applied ?? "{}") as PlanJson, r.apply.stderr);
    }, 30_000);
  }
});

describe("a saved plan is applied as a whole", () => {
  it("--rule and --changed-since are refused with a plan file, in one line, before any change", async () => {
    const { sb, repo, env } = await setup();
    const plan = await runCli(["plan", "rules", "--out", "plan.json"], env, { cwd: repo.dir });
    expect(plan.code, plan.stderr).toBe(0);
    for (const args of [
      ["--rule", "abort-onboardings"],
      ["--changed-since", "HEAD"],
    ]) {
      const r = await runCli(["apply", "plan.json", ...args], env, { cwd: repo.dir });
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`flowrules: ${args[0]} selects rules to plan; a saved plan is applied as a whole`);
    }
    expect(sb.requests().filter((q) => q.method === "POST")).toEqual([]);
  }, 30_000);
});

describe("precedence: flag > environment > profile > default", () => {
  async function withProfile(profile: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "flowrules-settings-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, "flowrules.config.yaml"), `default_profile: p\nprofiles:\n  p:\n${profile}`);
    return dir;
  }

  it("rate limit, base URL and opt-out tag: the highest source given wins, for every combination", async () => {
    const dir = await withProfile(
      "    base_url: http://127.0.0.1:3/api\n    rate_limit: 30\n    opt_out_tag: from-profile\n",
    );
    const noProfile = await mkdtemp(join(tmpdir(), "flowrules-settings-"));
    cleanups.push(() => rm(noProfile, { recursive: true, force: true }));
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), (flag, env, profile) => {
        const opts: Record<string, unknown> = flag
          ? { rateLimit: "10", baseUrl: "http://127.0.0.1:1/api", optOutTag: "from-flag" }
          : {};
        const vars: Record<string, string> = { FLOWRULES_API_KEY: KEY };
        if (env)
          Object.assign(vars, {
            FLOWRULES_RATE_LIMIT: "20",
            FLOWRULES_BASE_URL: "http://127.0.0.1:2/api",
            FLOWRULES_OPT_OUT_TAG: "from-env",
          });
        if (!flag && !env && !profile) vars.FLOWRULES_BASE_URL = "http://127.0.0.1:4/api"; // a URL is required
        const run = runSettings(opts, vars, profile ? dir : noProfile);
        const level = flag ? 0 : env ? 1 : profile ? 2 : 3;
        expect(run.connection.rateLimitPerMin).toBe([10, 20, 30, DEFAULT_RATE_LIMIT][level]);
        expect(run.connection.baseUrl).toBe(`http://127.0.0.1:${level + 1}/api`);
        expect(run.planning.optOutTag).toBe(["from-flag", "from-env", "from-profile", DEFAULT_OPT_OUT_TAG][level]);
        expect(run.profile?.name).toBe(profile ? "p" : undefined);
      }),
      { numRuns: 40 },
    );
  });

  it("an empty FLOWRULES_OPT_OUT_TAG turns the opt-out off over the profile's; an empty rate limit variable is unset", async () => {
    const dir = await withProfile("    base_url: http://127.0.0.1:3/api\n    rate_limit: 30\n    opt_out_tag: hold\n");
    const run = runSettings({}, { FLOWRULES_API_KEY: KEY, FLOWRULES_OPT_OUT_TAG: "", FLOWRULES_RATE_LIMIT: "" }, dir);
    expect(run.planning.optOutTag).toBeUndefined();
    expect(run.connection.rateLimitPerMin).toBe(30);
  });

  it("--shard: the default and a profile's limit are the tenant's budget, split; a flag or variable is each worker's own", async () => {
    const dir = await withProfile("    base_url: http://127.0.0.1:3/api\n    rate_limit: 60\n");
    const env = { FLOWRULES_API_KEY: KEY, FLOWRULES_BASE_URL: "http://127.0.0.1:3/api" };
    const empty = await mkdtemp(join(tmpdir(), "flowrules-settings-"));
    cleanups.push(() => rm(empty, { recursive: true, force: true }));
    expect(runSettings({ shard: "0/4" }, env, empty).connection.rateLimitPerMin).toBe(DEFAULT_RATE_LIMIT / 4);
    expect(runSettings({ shard: "0/4" }, env, dir).connection.rateLimitPerMin).toBe(15);
    expect(runSettings({ shard: "0/4", rateLimit: "60" }, env, dir).connection.rateLimitPerMin).toBe(60);
    expect(runSettings({ shard: "0/4" }, { ...env, FLOWRULES_RATE_LIMIT: "40" }, dir).connection.rateLimitPerMin).toBe(
      40,
    );
  });

  it("a profile's paths resolve against its file's folder; FLOWRULES_STATE beats the profile's state", async () => {
    const dir = await withProfile("    base_url: http://127.0.0.1:3/api\n    workflows: cat/wf.json\n    state: st\n");
    const run = runSettings({}, { FLOWRULES_API_KEY: KEY }, dir);
    expect(run.planning.workflows).toBe(join(dir, "cat/wf.json"));
    expect(run.planning.state).toBe(join(dir, "st"));
    expect(runSettings({}, { FLOWRULES_API_KEY: KEY, FLOWRULES_STATE: "elsewhere" }, dir).planning.state).toBe(
      "elsewhere",
    );
    expect(runSettings({ workflows: "mine.json" }, { FLOWRULES_API_KEY: KEY }, dir).planning.workflows).toBe(
      "mine.json",
    );
  });

  it("a profile may be named anything (even 'secrets-vault'); only keys inside it are checked for secrets", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flowrules-settings-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(
      join(dir, "flowrules.config.yaml"),
      "profiles:\n  secrets-vault:\n    base_url: http://127.0.0.1:5/api\n",
    );
    const run = runSettings({ profile: "secrets-vault" }, { FLOWRULES_API_KEY: KEY }, dir);
    expect(run.connection.baseUrl).toBe("http://127.0.0.1:5/api");
    expect(run.profile).toEqual({ name: "secrets-vault", file: "flowrules.config.yaml" });
  });

  it("notify: flag list > variable (comma-separated) > profile (a list, or a comma-separated string); duplicates once", async () => {
    const dir = await withProfile(
      "    base_url: http://127.0.0.1:3/api\n    notify: 'http://127.0.0.1:7/a, http://127.0.0.1:7/b,http://127.0.0.1:7/a'\n",
    );
    const hrefs = (opts: Record<string, unknown>, env: Record<string, string>): string[] =>
      runSettings(opts, { FLOWRULES_API_KEY: KEY, ...env }, dir).output.notify.map((u) => u.href);
    expect(hrefs({}, {})).toEqual(["http://127.0.0.1:7/a", "http://127.0.0.1:7/b"]);
    expect(hrefs({}, { FLOWRULES_NOTIFY_URL: "http://127.0.0.1:8/e" })).toEqual(["http://127.0.0.1:8/e"]);
    expect(hrefs({ notify: ["http://127.0.0.1:9/f"] }, { FLOWRULES_NOTIFY_URL: "http://127.0.0.1:8/e" })).toEqual([
      "http://127.0.0.1:9/f",
    ]);
  });

  it("a wrong value names its source: flag, variable or profile line", async () => {
    const dir = await withProfile("    base_url: http://127.0.0.1:3/api\n    opt_out_tag: 'a,b'\n");
    expect(() => runSettings({ rateLimit: "fast" }, { FLOWRULES_API_KEY: KEY }, dir)).toThrow(
      /^--rate-limit must be a whole number/,
    );
    expect(() => runSettings({}, { FLOWRULES_API_KEY: KEY, FLOWRULES_RATE_LIMIT: "-1" }, dir)).toThrow(
      /^FLOWRULES_RATE_LIMIT must be/,
    );
    expect(() => runSettings({}, { FLOWRULES_API_KEY: KEY }, dir)).toThrow(
      /^flowrules\.config\.yaml:5:18: opt_out_tag of profile p "a,b": a tag cannot hold a comma/,
    );
  });

  it("the progress ETA and the limiter take their pace from one share of the limit", () => {
    expect(sendRatePerMin(100)).toBe(100 * WINDOW_SHARE);
    expect(sendRatePerMin(0)).toBe(0);
  });
});
