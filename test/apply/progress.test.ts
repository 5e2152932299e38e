/**
 * Progress where people can see it: the built CLI run under a pseudo-terminal (`script` from util-linux) shows the
 * plan and apply lines; with --log-format json it logs `progress` events; on a plain pipe it adds nothing.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { CLI, runCli } from "../helpers/cli.js";
import { makePlan, MIXED_RULES, tempDir, writeRules } from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const quote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

/** Runs the CLI with a terminal as stdin/stdout/stderr; returns what the terminal showed. */
function underTerminal(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, CLI, ...args].map(quote).join(" ");
  return new Promise((resolve) => {
    // async: the sandbox answering the child runs in this process's event loop
    const child = spawn("script", ["-qefc", command, "/dev/null"], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TERM: "xterm", COLUMNS: "200", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let screen = "";
    child.stdout?.on("data", (d: Buffer) => (screen += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (screen += d.toString()));
    child.on("close", (code) => resolve({ code, screen }));
  });
}

const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

describe.runIf(hasScript)("progress on a terminal", () => {
  it("plan shows requests per rule, apply shows changes done of total; a pipe gets neither", async () => {
    sb = await startSandbox({ port: 0, instances: 150, seed: 51 });
    sb.setFaults({ latencyMs: 10 });
    const dir = await tempDir();
    const rules = await writeRules(dir, MIXED_RULES);
    const env = { FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_RATE_LIMIT: "0" };

    const plan = await underTerminal(["plan", rules, "--out", join(dir, "plan.json")], env, dir);
    expect(plan.code).toBe(0);
    expect(plan.screen).toMatch(/plan: rule 1\/3 approve-expenses · \d+\/\d+ instances · \d+\/\d+ requests/);
    expect(plan.screen).toMatch(/plan: rule 3\/3 abort-onboardings/);

    const apply = await underTerminal(["apply", join(dir, "plan.json")], env, dir);
    expect(apply.code).toBe(0);
    expect(apply.screen).toMatch(/\r\u001b\[2Kapply: \d+\/\d+ changes \(\d+%\)/);
    expect(apply.screen).toMatch(/apply: (\d+)\/\1 changes \(100%\)/);
    expect(apply.screen).toContain("Apply complete");

    // the same on a pipe: the summary, no progress line
    const other = await tempDir();
    const { file } = await makePlan(sb, other, MIXED_RULES);
    const piped = await runCli(["apply", file], env, { cwd: other });
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toMatch(/apply: \d+\/\d+ changes/);
    expect(piped.stderr).not.toContain("\r");
    expect(piped.stdout).toContain("Apply complete");
  }, 90_000);

  it("--log-format json: `progress` events, every stderr line JSON, even on a terminal", async () => {
    sb = await startSandbox({ port: 0, instances: 100, seed: 52 });
    const dir = await tempDir();
    const { file } = await makePlan(sb, dir, MIXED_RULES);
    const env = { FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_RATE_LIMIT: "0" };
    const piped = await runCli(["--log-format", "json", "apply", file, "--quiet"], env, { cwd: dir });
    expect(piped.code).toBe(0);
    const events = piped.stderr
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const progress = events.filter((e) => e.event === "progress");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatchObject({ phase: "apply", total: expect.any(Number), done: expect.any(Number) });

    const again = await tempDir();
    const second = await makePlan(sb, again, MIXED_RULES);
    const tty = await underTerminal(["--log-format", "json", "apply", second.file], env, again);
    expect(tty.code).toBe(0);
    const lines = tty.screen.split(/\r?\n/).filter((l) => l.startsWith("{"));
    expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).toContain("progress");
    expect(tty.screen).not.toContain("\u001b[2K");
  }, 90_000);
});
