/**
 * `plan --compare REF --forecast DURATION` (docs/forecast.md): for each added or edited rule whose plan time alone
 * moves within the horizon, one line, whose counts are the forecast's; the CLI on a temporary git repository against
 * the sandbox.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempRepo, type TempRepo } from "./git-repo.js";

const abort = (days: number): string => `
  - name: abort-idle-onboardings
    workflow: 1043
    select: { status: [running], last_updated_time_before: -P${days}D }
    actions: [abort]
`;
const REPORT = `
  - name: running-by-status
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { group_by: status }
`;

let sb: RunningSandbox;
let repo: TempRepo;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 300, seed: 7 });
  repo = await tempRepo();
  await repo.write("rules/r.yaml", `version: 1\nrules:${abort(150)}${REPORT}`);
  await repo.commit("rules");
  // the edit: aborts after 60 days instead of 150; the report is not touched
  await repo.write("rules/r.yaml", `version: 1\nrules:${abort(60)}${REPORT}`);
});
afterAll(async () => {
  await sb.close();
});

const env = () => ({ FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" });

describe("plan --compare --forecast", () => {
  it("adds one line per touched rule that time alone moves, with the forecast's counts", async () => {
    const json = await runCli(
      ["plan", "rules", "--compare", "HEAD", "--forecast", "30d", "--format", "json", "-q"],
      env(),
      { cwd: repo.dir },
    );
    expect(json.code, json.stderr).toBe(0);
    const plan = JSON.parse(json.stdout) as {
      impact: Array<{
        rule: string;
        forecast?: { horizon: string; added: number; removed: number; first_at?: string };
      }>;
    };
    expect(plan.impact.map((i) => i.rule)).toEqual(["abort-idle-onboardings"]);
    const f = plan.impact[0]?.forecast;
    expect(f?.horizon).toBe("30 days");
    expect(f?.added ?? 0).toBeGreaterThan(0);

    // the same counts as the forecast of the working tree's rule
    const forecast = await runCli(
      ["forecast", "rules", "--until", "+30d", "--rule", "abort-idle-onboardings", "--format", "json", "-q"],
      env(),
      { cwd: repo.dir },
    );
    const doc = JSON.parse(forecast.stdout) as {
      rules: Array<{ rule: string; points: Array<{ added: number; at: string; step_added: number }> }>;
    };
    const points = doc.rules[0]?.points ?? [];
    expect(f?.added).toBe(points.at(-1)?.added);
    expect(f?.first_at?.slice(0, 10)).toBe(
      points
        .slice(1)
        .find((p) => p.step_added > 0)
        ?.at.slice(0, 10),
    );

    const text = await runCli(["plan", "rules", "--compare", "HEAD", "--forecast", "30d", "-q"], env(), {
      cwd: repo.dir,
    });
    const lines = text.stdout.split("\n");
    expect(lines[0]).toMatch(/^abort-idle-onboardings \(edited\): /);
    expect(lines[1]).toMatch(
      new RegExp(`^  in the next 30 days time alone adds \\+${f?.added ?? 0} \\(first on \\w{3} \\d{1,2} \\w{3}\\)$`),
    );
    const md = await runCli(
      ["plan", "rules", "--compare", "HEAD", "--forecast", "30d", "--format", "markdown", "-q"],
      env(),
      { cwd: repo.dir },
    );
    expect(md.stdout).toMatch(/\n {2}- in the next 30 days time alone adds \+\d+ \(first on \w{3} \d{1,2} \w{3}\)\n/);
  });

  it("--forecast without --compare, or with a bare number, is a one-line refusal", async () => {
    for (const args of [
      ["--forecast", "7d"],
      ["--compare", "HEAD", "--forecast", "7"],
    ]) {
      const r = await runCli(["plan", "rules", ...args], env(), { cwd: repo.dir });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
