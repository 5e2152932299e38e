/**
 * The built CLI's `watch` as a child process against the sandbox enforcing 100 requests a minute: a watcher killed
 * with SIGKILL at seeded random points, then started again, sends no change twice (counted from the sandbox's request
 * log) and catches up. SIGTERM at each moment, and a second watcher's refusal: ./signals.test.ts. Uses dist/ (`npm test` builds first; this file builds when dist/ lacks watch).
 */
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { planRuleSet } from "../../src/commands/plan.js";
import { loadRules } from "../../src/rules/index.js";
import { spawnCli, type CliRun } from "../helpers/cli.js";
import { captureIO, changeKey, connection, effectiveMutations, posts, tempDir, writeRules } from "../apply/helpers.js";
import { APPROVE_RULES, until } from "./helpers.js";
import { Prng } from "../../src/sandbox/prng.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let sb: RunningSandbox | undefined;
const children: CliRun[] = [];
const dirs: string[] = [];

beforeAll(() => {
  if (!existsSync(join(ROOT, "dist", "commands", "watch.js")))
    execSync("npm run build", { cwd: ROOT, stdio: "ignore" });
}, 120_000);

afterEach(async () => {
  for (const c of children.splice(0))
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGKILL");
  await sb?.close();
  sb = undefined;
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

function watchChild(dir: string, extra: string[] = []): CliRun {
  const run = spawnCli(
    ["watch", "rules.yaml", "--state", "state", "--apply", "--interval", "1s", ...extra],
    {
      FLOWRULES_BASE_URL: sb?.baseUrl,
      FLOWRULES_API_KEY: "sandbox-admin",
      FLOWRULES_RATE_LIMIT: "100",
      // test-only: polls faster than the 5 s floor (docs/watch.md)
      FLOWRULES_WATCH_MIN_INTERVAL_MS: "200",
    },
    { cwd: dir },
  );
  children.push(run);
  return run;
}

async function expectedKeys(dir: string): Promise<string[]> {
  const loaded = await loadRules([join(dir, "rules.yaml")]);
  if (!loaded.ruleSet) throw new Error("rules do not load");
  const plan = await planRuleSet(loaded.ruleSet, connection(sb as RunningSandbox), captureIO(), { quiet: true });
  return plan.changes.map(changeKey).sort();
}

describe("watch as a process", () => {
  it.each([1, 2, 3, 4])(
    "SIGKILL at a random point (seed %i), then a new watcher: nothing sent twice, everything caught up",
    async (seed) => {
      const random = Prng.fn(seed);
      sb = await startSandbox({ port: 0, instances: 150, seed: 20 + seed, rateLimitPerMin: 100, latencyMs: 20 });
      const s = sb;
      const dir = await tempDir();
      dirs.push(dir);
      await writeRules(dir, APPROVE_RULES);
      const expected = await expectedKeys(dir);
      expect(expected.length).toBeGreaterThan(5);
      s.clearRequests();

      const first = watchChild(dir);
      // kill while planning (no POST yet) or after some of the changes were sent
      const after = Math.floor(random() * expected.length);
      if (after === 0) await new Promise((r) => setTimeout(r, 300 + random() * 700));
      else await until(() => posts(s).length >= after || first.child.exitCode !== null, 20_000, `${after} POSTs`);
      first.child.kill("SIGKILL");
      await first.done;

      const second = watchChild(dir);
      let said = "";
      second.child.stderr?.on("data", (d: Buffer) => (said += d.toString()));
      await until(
        () => said.includes("watching 1 rule") && expected.every((k) => effectiveMutations(s).has(k)),
        30_000,
        "the watcher to catch up",
      );
      second.child.kill("SIGTERM");
      const r = await second.done;
      expect(r.code, r.stderr).toBe(0);

      const counts = effectiveMutations(s);
      expect([...counts.keys()].sort()).toEqual(expected);
      for (const [k, n] of counts) expect(n, k).toBe(1);
      expect(s.requests().filter((x) => x.status === 429)).toEqual([]);
    },
    60_000,
  );
});
