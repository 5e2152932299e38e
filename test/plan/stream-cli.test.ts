/**
 * The built CLI writes a large JSON plan to a pipe as the reader takes it (src/plan/write.ts, src/log/command-io.ts):
 * a reader that takes its time gets the whole plan, the very bytes of the plan file; a reader that goes away early
 * ends the run cleanly instead of leaving it waiting.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { checkPlannedChange } from "../../src/actions/index.js";
import { loadPlanFile } from "../../src/plan/read.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { spawnCli } from "../helpers/cli.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

const RULES = `version: 1
rules:
  - name: every-claim
    workflow: 1042
    select: {}
    actions:
      - report: { group_by: status, columns: [id, name, status, started_time, last_updated_time] }
`;

let env: Record<string, string>;
let rules: string;
let dir: string;
let base: string;
beforeAll(async () => {
  // a plan of a few hundred KB: several times what a pipe holds (64 KB)
  const sb = closeAfterAll(await startSandbox({ port: 0, instances: 3000, seed: 5 }));
  dir = await tempDir();
  rules = join(dir, "rules.yaml");
  await writeFile(rules, RULES);
  env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" };
  base = sb.baseUrl;
});

describe("a large JSON plan through a pipe", () => {
  it("reaches a slow reader whole: the bytes of the plan file, a plan apply accepts", async () => {
    const file = join(dir, "plan.json");
    const run = spawnCli(["plan", rules, "-q", "--rate-limit", "0", "--format", "json", "--out", file], env);
    const stdout = run.child.stdout;
    if (!stdout) throw new Error("no stdout");
    // the helper's reader gathers the text; this one holds the pipe back a moment after each chunk
    let chunks = 0;
    stdout.on("data", () => {
      chunks++;
      stdout.pause();
      setTimeout(() => stdout.resume(), 2);
    });
    const result = await run.done;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const text = await readFile(file, "utf8");
    expect(result.stdout).toBe(text);
    expect(text.length).toBeGreaterThan(4 * 65_536);
    expect(chunks).toBeGreaterThan(3);
    const read = await loadPlanFile(file, base, checkPlannedChange);
    expect(read.plan.reports[0]?.rows.length).toBeGreaterThan(1000);
    expect(read.plan.reports[0]?.rows.length).toBe(read.plan.rules[0]?.matched);
  });

  it("stops writing when the reader goes away, and the run ends", async () => {
    const run = spawnCli(["plan", rules, "-q", "--rate-limit", "0", "--format", "json"], env);
    const stdout = run.child.stdout;
    if (!stdout) throw new Error("no stdout");
    // `| head -c 100`: the first chunk read, then the pipe closed
    stdout.once("data", () => stdout.destroy());
    const result = await run.done;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBeLessThan(100_000);
  });
});
