/**
 * Issue 28, point 4: the same plan applied at once from two working directories (so two different default lock
 * files) sends each change once: the journal beside the plan has its own lock, and the second run refuses while the
 * first lives. Two CLI processes against the sandbox; the sandbox's request log counts what was sent.
 */
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { changeKey, effectiveMutations, makePlan, MIXED_RULES, tempDir } from "../apply/helpers.js";
import { spawnCli } from "../helpers/cli.js";

let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 150, seed: 284 });
  dir = await tempDir();
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

describe("one plan applied from two working directories at once", () => {
  it("sends every change once: the second run finds the first on the journal and refuses", async () => {
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    expect(plan.changes.length).toBeGreaterThan(10);
    await mkdir(join(dir, "a"));
    await mkdir(join(dir, "b"));
    sb.clearRequests();
    // slow answers keep the first run busy while the second starts
    sb.setFaults({ latencyMs: 60 });
    const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
    const runs = [
      spawnCli(["apply", file], env, { cwd: join(dir, "a") }),
      spawnCli(["apply", file], env, { cwd: join(dir, "b") }),
    ];
    const results = await Promise.all(runs.map((r) => r.done));
    sb.setFaults({ latencyMs: 0 });

    const refused = results.filter((r) => r.code === 1);
    const applied = results.filter((r) => r.code === 0);
    expect(applied, results.map((r) => r.stderr).join("\n")).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.stderr).toMatch(/another apply holds the lock .*plan\.json\.journal\.jsonl\.lock: pid \d+/);
    expect(refused[0]?.stderr.trimEnd().split("\n")).toHaveLength(1);

    const sent = effectiveMutations(sb);
    for (const c of plan.changes) expect(sent.get(changeKey(c)), changeKey(c)).toBe(1);
    expect([...sent.values()].every((n) => n === 1)).toBe(true);
    // both locks are gone once the runs end
    expect(existsSync(`${file}.journal.jsonl.lock`)).toBe(false);
  });
});
