/**
 * `plan` and `apply` under real signals (src/cli/signals.ts, docs/watch.md "Signals"): a stop while waiting for a
 * rate-limit slot ends at once, writing nothing; SIGHUP stops an apply instead of killing it silently, and a second
 * signal leaves at once, the lock removed. SIGTERM mid-apply (deferred, exit 0, resumed): test/apply/crash-resume.test.ts.
 * One sandbox for the file.
 */
import { execSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { spawnCli, type CliRun } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { APPROVE_RULES, stderrOf, until } from "../watch/helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WAIT = 30_000;

let sb: RunningSandbox;
const children: CliRun[] = [];

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cli", "signals.js"))) execSync("npm run build", { cwd: ROOT, stdio: "ignore" });
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 600, seed: 5 }));
}, 120_000);

afterEach(() => {
  for (const c of children.splice(0))
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGKILL");
  sb.setFaults({ latencyMs: 0 });
});

function env(over: Record<string, string> = {}): Record<string, string> {
  return { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0", ...over };
}

function cli(dir: string, args: string[], over: Record<string, string> = {}): CliRun & ReturnType<typeof stderrOf> {
  const run = spawnCli(args, env(over), { cwd: dir });
  children.push(run);
  return { ...run, ...stderrOf(run.child) };
}

async function setUp(): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, "rules.yaml"), APPROVE_RULES);
  return dir;
}

describe("plan", () => {
  it("SIGTERM while waiting for a rate-limit slot: stops at once, exit 1, no plan written", async () => {
    const dir = await setUp();
    const p = cli(dir, ["plan", "rules.yaml", "--out", "plan.json"], { FLOWRULES_RATE_LIMIT: "5" });
    await p.saw(/waiting [\d.]+ s for the window/, WAIT);
    p.child.kill("SIGTERM");
    const r = await p.done;
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/SIGTERM: stopping/);
    expect(r.stderr).toMatch(/^flowrules: stopped before the plan was complete: no plan was made/m);
    expect(r.stdout).toBe("");
    expect(existsSync(join(dir, "plan.json"))).toBe(false);
  }, 60_000);
});

describe("apply", () => {
  it("SIGHUP stops an apply as SIGTERM does (no silent kill); a second signal leaves at once, the lock removed", async () => {
    const dir = await setUp();
    // slow answers: the stop waits for those in flight, and the second signal comes meanwhile
    sb.setFaults({ latencyMs: 2000 });
    sb.clearRequests();
    const a = cli(dir, ["apply", "rules.yaml", "--auto-approve"]);
    await until(() => sb.requests().length >= 1, WAIT, "the first request");
    a.child.kill("SIGHUP");
    await a.saw(/SIGHUP: stopping — no new request/, WAIT);
    a.child.kill("SIGTERM");
    const r = await a.done;
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toMatch(/SIGTERM again: leaving at once/);
    expect(existsSync(join(dir, ".flowrules", "apply.lock"))).toBe(false);
  }, 60_000);
});

describe("the stop's grace", () => {
  const script = (body: string): string =>
    `import(${JSON.stringify(join(ROOT, "dist", "cli", "signals.js"))}).then(({ interruptions }) => {
      const io = { stderr: (s) => process.stderr.write(s), stdout: () => undefined, env: {}, stdoutIsTTY: false, stderrIsTTY: false };
      ${body}
    });`;

  it("a run still busy when the grace is over leaves with exit 1, saying so; one that ended keeps its exit code", async () => {
    // a request that never finishes stands in as a timer that never ends
    const hung = await runNode(
      script(
        `interruptions(io, { graceMs: 200 }); setInterval(() => undefined, 1000); process.kill(process.pid, "SIGTERM");`,
      ),
    );
    expect(hung.code).toBe(1);
    expect(hung.stderr).toMatch(/^flowrules: SIGTERM: stopping/m);
    expect(hung.stderr).toMatch(
      /^flowrules: still busy 0 s after SIGTERM \(a request in flight has not finished\): leaving; the journal decides it at the next run$/m,
    );
    // the verb finished (disposed) and only a lingering handle holds the process: its exit code stands
    const done = await runNode(
      script(
        `const i = interruptions(io, { graceMs: 200 }); setInterval(() => undefined, 1000); process.kill(process.pid, "SIGTERM"); setTimeout(() => { process.exitCode = 0; i.dispose(); }, 20);`,
      ),
    );
    expect(done.code).toBe(0);
    expect(done.stderr).not.toMatch(/still busy/);
  });
});

function runNode(code: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (c) => resolve({ code: c, stderr }));
  });
}
