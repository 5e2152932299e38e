/**
 * A state that outlives the service's data (docs/contracts.md, "State between runs"):
 * a backup restored under a running tenant, or a sandbox reset on the same address, between two `plan --state` runs
 * of the built CLI. The run after notices it in one warning, reads afresh, and plans what a stateless plan plans —
 * not what the state remembers of data the service no longer holds.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { comparable } from "../helpers/comparable-plan.js";

const RULES = fileURLToPath(new URL("../../rules/", import.meta.url));
const WENT_BACK =
  /^warning: state: the service went back since the last run \((.+)\), as after a restored backup or a reset: the state is not used, everything is read afresh$/m;

const sandboxes: RunningSandbox[] = [];
afterEach(async () => {
  for (const s of sandboxes.splice(0)) await s.close();
});

async function plan(
  sb: RunningSandbox,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(["plan", RULES, "--format", "json", ...args], {
    FLOWRULES_BASE_URL: sb.baseUrl,
    FLOWRULES_API_KEY: "sandbox-admin",
    FLOWRULES_RATE_LIMIT: "0",
  });
}

async function started(opts: { port: number; instances: number; seed: number }): Promise<RunningSandbox> {
  const sb = await startSandbox(opts);
  sandboxes.push(sb);
  return sb;
}

describe("the service went back between two runs with state", () => {
  it("a backup restored: the next run warns once and plans what a stateless plan plans", async () => {
    const sb = await started({ port: 0, instances: 400, seed: 42 });
    const state = join(await tempDir(), "state");
    expect((await plan(sb, ["--state", state])).code).not.toBe(1);
    const backup = sb.store.backup();
    // a day of people's work: instances started, steps completed, values edited
    sb.simulate({ seed: 4, changes: 60 });
    const seen = await plan(sb, ["--state", state]);
    expect(seen.stderr).not.toMatch(WENT_BACK);
    sb.store.restore(backup);

    const after = await plan(sb, ["--state", state]);
    const stateless = await plan(sb, []);
    expect(after.stderr.match(new RegExp(WENT_BACK.source, "gm")) ?? [], after.stderr).toHaveLength(1);
    expect(comparable(after.stdout)).toEqual(comparable(stateless.stdout));
    // and the state it wrote serves the run after, without a warning
    const next = await plan(sb, ["--state", state]);
    expect(next.stderr).not.toMatch(WENT_BACK);
    expect(comparable(next.stdout)).toEqual(comparable(stateless.stdout));
  }, 120_000);

  it("a sandbox reset on the same address: the next run warns once and plans what a stateless plan plans", async () => {
    const first = await started({ port: 0, instances: 400, seed: 42 });
    const port = Number(new URL(first.baseUrl).port);
    const state = join(await tempDir(), "state");
    expect((await plan(first, ["--state", state])).code).not.toBe(1);
    first.simulate({ seed: 5, changes: 40 });
    expect((await plan(first, ["--state", state])).stderr).not.toMatch(WENT_BACK);
    await first.close();
    sandboxes.splice(sandboxes.indexOf(first), 1);

    // reset: another seed, fewer instances, the same base URL
    const reset = await started({ port, instances: 300, seed: 43 });
    expect(reset.baseUrl).toBe(first.baseUrl);
    const after = await plan(reset, ["--state", state]);
    const stateless = await plan(reset, []);
    expect(after.stderr.match(new RegExp(WENT_BACK.source, "gm")) ?? [], after.stderr).toHaveLength(1);
    expect(comparable(after.stdout)).toEqual(comparable(stateless.stdout));
  }, 120_000);
});
