/**
 * Settings you can see (issue 36, point 5): `flowrules config [--check]` run as a user runs it — the built CLI in a
 * repository whose config file sits at its root, against one sandbox over loopback — and the one duration grammar
 * (issue 37, point 1). The key's value never appears in what is printed; a refused key names its source.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { APPLYING_FLAGS, WATCH_FLAGS } from "../../src/cli/flags.js";
import { buildProgram } from "../../src/cli/program.js";
import { configFileChoice } from "../../src/cli/config-choice.js";
import { applyingFrom, runSettings, sourcesOf, watchingFrom } from "../../src/cli/settings.js";
import { durationText, readDuration } from "../../src/text/duration.js";
import { DEFAULT_CLOCK_SKEW_MS, DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_RECHECK_EVERY_MS } from "../../src/model/settings.js";
import { profileHint } from "../../src/sandbox/hints.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

/** A wrong key, distinctive enough that finding it anywhere in the output is a leak. */
const WRONG = "wrong-key-5b1f9c";
const RULES = `version: 1
rules:
  - name: approve-claims
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111, inputs: [{ action: 50230, value: { inputValue: "ok" } }] }
`;

let sb: RunningSandbox;
/** a repository: .git at its root, the config file beside it, rules in rules/ */
let repo: string;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 40, seed: 5 }));
  repo = await tempDir("flowrules-config-");
  await mkdir(join(repo, ".git"));
  await mkdir(join(repo, "rules"));
  await writeFile(join(repo, "rules", "claims.yaml"), RULES);
  // the sandbox banner's own profile (the README tour's), plus a second one for a tenant with its own key
  const hint = profileHint(sb.baseUrl);
  await writeFile(
    join(repo, "flowrules.config.yaml"),
    [
      "default_profile: sandbox",
      hint[0],
      hint[1],
      "  staging:",
      `    base_url: ${sb.baseUrl}`,
      "    api_key_env: STAGING_KEY",
      "",
    ].join("\n"),
  );
});

describe("flowrules config", () => {
  it("from a subfolder: finds the repository's config, shows each setting's source, and --check says URL and key work", async () => {
    const r = await runCli(["config", "--check"], { SANDBOX_KEY: "sandbox-admin" }, { cwd: join(repo, "rules") });
    expect(r.code, r.stderr).toBe(0);
    const line = (name: string): string => r.stdout.split("\n").find((l) => l.startsWith(`${name} `)) ?? "";
    expect(line("config file")).toContain(join(repo, "flowrules.config.yaml"));
    expect(line("profile")).toMatch(/sandbox +from default_profile of /);
    expect(line("base url")).toMatch(
      new RegExp(
        `${sb.baseUrl.replace(/[./]/g, "\\$&")} +from profile 'sandbox' \\(.*flowrules\\.config\\.yaml:3:\\d+\\)`,
      ),
    );
    expect(line("api key")).toMatch(/set \(never shown\) +from profile 'sandbox' \(api_key_env SANDBOX_KEY\)$/);
    // the banner's profile sets no client limit: the sandbox runs at full speed
    expect(line("rate limit")).toMatch(/0: no client-side limit +from profile 'sandbox'/);
    expect(line("timeout")).toMatch(/30s +default$/);
    expect(r.stdout.trim().split("\n").at(-1)).toBe(
      `✓ ${sb.baseUrl} answers and accepts the API key from profile 'sandbox' (api_key_env SANDBOX_KEY): 4 workflows visible`,
    );
    expect(r.stdout).not.toContain("sandbox-admin");
  });

  it("a wrong key from a profile: one line naming the profile's variable, never the key; exit 1", async () => {
    const before = sb.requests().length;
    const r = await runCli(["config", "--check", "--profile", "staging"], { STAGING_KEY: WRONG }, { cwd: repo });
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split("\n").at(-1)).toBe(
      `✗ ${new URL(sb.baseUrl).host} refused the API key from profile 'staging' (api_key_env STAGING_KEY): 401 Unauthorized; check that variable's value`,
    );
    expect(r.stdout + r.stderr).not.toContain(WRONG);
    // one cheap request: the workflow list
    expect(
      sb
        .requests()
        .slice(before)
        .map((q) => `${q.method} ${q.path}`),
    ).toEqual(["GET /api/processes/"]);
  });

  it("a key that sees none of the workflows the rules name: one line naming them, exit 1 (rules/ by default, or the paths given)", async () => {
    const r = await runCli(["config", "--check"], { SANDBOX_KEY: "sandbox-outsider" }, { cwd: repo });
    expect(r.code).toBe(1);
    const last = r.stdout.trim().split("\n").at(-1);
    expect(last).toBe(
      `✗ ${new URL(sb.baseUrl).host} accepts the API key from profile 'sandbox' (api_key_env SANDBOX_KEY), but it sees none of the workflows the rules name (1042; 0 workflows visible): every rule would fail; check the key's permissions or the base URL`,
    );
    expect(r.stdout).not.toContain("sandbox-outsider");
    // without rules to compare (none at the path given), a key that sees no workflow at all is refused as well
    const none = await runCli(
      ["config", "--check", "no-rules-here/"],
      { SANDBOX_KEY: "sandbox-outsider" },
      { cwd: repo },
    );
    expect(none.code).toBe(1);
    expect(none.stdout.trim().split("\n").at(-1)).toMatch(
      /^✗ .* accepts the API key from .*, but it sees no workflow: a plan would find nothing; /,
    );
    // the admin key sees workflow 1042: fine
    expect((await runCli(["config", "--check"], { SANDBOX_KEY: "sandbox-admin" }, { cwd: repo })).code).toBe(0);
    // and the plan with that key says that every rule failed, exit 1
    const plan = await runCli(["plan"], { SANDBOX_KEY: "sandbox-outsider", NO_COLOR: "1" }, { cwd: repo });
    expect(plan.code).toBe(1);
    expect(plan.stdout).toMatch(/^Plan: every rule failed \(the one rule\): nothing planned\. 1 error\.$/m);
  });

  it("--format json: the same report, the key only as its source; a service that is down is named by its host", async () => {
    const r = await runCli(
      ["config", "--check", "--format", "json", "--base-url", "http://127.0.0.1:9/api"],
      { FLOWRULES_API_KEY: WRONG },
      { cwd: repo },
    );
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as {
      profile: { name: string };
      settings: Array<{ setting: string; value: string | null; source: string }>;
      check: { ok: boolean; message: string };
    };
    expect(doc.profile.name).toBe("sandbox");
    expect(doc.settings.find((s) => s.setting === "base url")).toEqual({
      setting: "base url",
      value: "http://127.0.0.1:9/api",
      source: "--base-url",
    });
    expect(doc.settings.find((s) => s.setting === "api key")).toEqual({
      setting: "api key",
      value: null,
      source: "FLOWRULES_API_KEY",
    });
    expect(doc.check).toMatchObject({ ok: false });
    expect(doc.check.message).toMatch(
      /^cannot reach 127\.0\.0\.1:9: .*; is the service running and the base URL right\?$/,
    );
    expect(r.stdout + r.stderr).not.toContain(WRONG);
  });

  it("`cd rules && flowrules plan .` plans against the repository's profile", async () => {
    const r = await runCli(
      ["plan", ".", "--format", "json"],
      { SANDBOX_KEY: "sandbox-admin" },
      { cwd: join(repo, "rules") },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ base_url: sb.baseUrl, profile: "sandbox" });
  });

  it("`cd rules && flowrules plan` (no path) says in one line that this folder holds rule files and to give `.`", async () => {
    const r = await runCli(["validate"], {}, { cwd: join(repo, "rules") });
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toMatch(
      /no such file or folder: rules\/ \(this folder holds rule files: give `\.` to use them\)/,
    );
    const elsewhere = await runCli(["validate"], {}, { cwd: repo });
    expect(elsewhere.stderr + elsewhere.stdout).not.toContain("this folder holds rule files");
  });

  it("the config file is looked for up to the repository root, and outside a repository in the working directory only", async () => {
    expect(configFileChoice({}, {}, join(repo, "rules"))).toMatchObject({
      abs: join(repo, "flowrules.config.yaml"),
      from: "found",
    });
    const outside = await tempDir("flowrules-config-outside-");
    await writeFile(join(outside, "flowrules.config.yaml"), "profiles: {}\n");
    await mkdir(join(outside, "sub"));
    expect(configFileChoice({}, {}, outside)).toMatchObject({ from: "found" });
    expect(configFileChoice({}, {}, join(outside, "sub"))).toMatchObject({ from: "none" });
    expect(configFileChoice({ config: "x.yaml" }, {}, outside)).toMatchObject({
      abs: join(outside, "x.yaml"),
      from: "--config",
    });
  });

  it("the README tour's profile is the one the sandbox banner and `npm run demo` print", async () => {
    const readme = await readFile(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
    expect(readme).toContain(profileHint("http://127.0.0.1:4010/api")[1]);
    expect(readme).toContain(profileHint("http://127.0.0.1:4010/api")[2]);
  });
});

describe("durations: one grammar, a unit required", () => {
  const env = { FLOWRULES_BASE_URL: "http://127.0.0.1:4010/api", FLOWRULES_API_KEY: "k" };
  const durationFlags = [...Object.values(APPLYING_FLAGS), ...Object.values(WATCH_FLAGS)]
    .map((s) => s.flags ?? "")
    .filter((f) => f.endsWith("<duration>"))
    .map((f) => f.split(" ")[0] ?? "");

  it("apply and watch register every line of their tables (their flags come from the settings model)", () => {
    const longs = (verb: string): string[] =>
      buildProgram()
        .commands.find((c) => c.name() === verb)
        ?.options.map((o) => o.long ?? "") ?? [];
    for (const [verb, table] of [
      ["apply", APPLYING_FLAGS],
      ["watch", WATCH_FLAGS],
    ] as const) {
      const flags = Object.values(table).map((s) => (s.flags ?? "").split(" ")[0]);
      expect(flags.length).toBeGreaterThan(4);
      expect(longs(verb), verb).toEqual(expect.arrayContaining(flags));
    }
  });

  it("reads ms, s, m, h and d, and writes the shortest exact form back", () => {
    expect(["500ms", "90s", "5m", "24h", "7d", "1.5h", " 2m "].map((t) => readDuration(t))).toEqual(
      [500, 90_000, 300_000, 86_400_000, 604_800_000, 5_400_000, 120_000].map((ms) => ({ ok: true, ms })),
    );
    expect([800, 90_000, 840_000, 7_200_000, 0].map(durationText)).toEqual(["800ms", "90s", "14m", "2h", "0s"]);
    for (const ms of [1, 999, 1000, 61_000, 3_600_000, 5_400_000])
      expect(readDuration(durationText(ms))).toEqual({ ok: true, ms });
  });

  it("a bare number is one line naming the units, for every duration flag of apply, watch and the connection", () => {
    expect(durationFlags.sort()).toEqual([
      "--clock-skew",
      "--interval",
      "--lock-timeout",
      "--lock-wait",
      "--max-duration",
      "--recheck-every",
    ]);
    const attr = (flag: string): string => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    for (const flag of ["--clock-skew", "--lock-timeout", "--lock-wait", "--max-duration"]) {
      expect(() => applyingFrom(sourcesOf({ [attr(flag)]: "30" }, env)), flag).toThrow(
        new RegExp(`^${flag} needs a unit: 30s, 30m or 30h \\(ms, s, m, h or d\\); got "30"$`),
      );
    }
    expect(() => watchingFrom(sourcesOf({ interval: "30" }, env))).toThrow(/^--interval needs a unit: 30s, 30m or 30h/);
    expect(() => runSettings({ timeout: "30" }, env)).toThrow(/^--timeout needs a unit/);
    expect(() => runSettings({ state: "st", resyncAfter: "24" }, env)).toThrow(/^--resync-after needs a unit/);
    // documented as `--recheck-every SECONDS`: a bare number stays seconds there
    expect(applyingFrom(sourcesOf({ recheckEvery: "30" }, env)).recheckEveryMs).toBe(30_000);
    expect(
      applyingFrom(sourcesOf({ recheckEvery: "2m", lockTimeout: "90s", maxDuration: "14m", clockSkew: "0s" }, env)),
    ).toMatchObject({
      recheckEveryMs: 120_000,
      lockTimeoutMs: 90_000,
      maxDurationMs: 840_000,
      clockSkewMs: 0,
    });
    expect(applyingFrom(sourcesOf({}, env))).toMatchObject({
      recheckEveryMs: DEFAULT_RECHECK_EVERY_MS,
      lockTimeoutMs: DEFAULT_LOCK_TIMEOUT_MS,
      clockSkewMs: DEFAULT_CLOCK_SKEW_MS,
    });
  });

  it("through the CLI: exit 1, the one line, no request", async () => {
    const before = sb.requests().length;
    const r = await runCli(
      ["apply", "rules", "--auto-approve", "--max-duration", "14"],
      { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" },
      { cwd: repo },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('flowrules: --max-duration needs a unit: 14s, 14m or 14h (ms, s, m, h or d); got "14"\n');
    expect(sb.requests().length).toBe(before);
  });
});
