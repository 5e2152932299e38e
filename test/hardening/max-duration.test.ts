/**
 * Issue 28, point 11: `--max-duration` is not overrun while changes wait for the rate window. Under a client-side
 * limit of 10 requests a minute, the run stops sending once its next slot would open after the deadline (instead of
 * waiting about a minute for the window), defers the rest, and the same apply again finishes with nothing sent twice.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  captureIO,
  changeKey,
  connection,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  runApply,
  stateHolds,
  tempDir,
} from "../apply/helpers.js";

let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 120, seed: 2812 });
  dir = await tempDir();
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

describe("--max-duration under the rate window", () => {
  it("sends nothing after the deadline and does not wait for the window; a second run finishes the plan once", async () => {
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    expect(plan.changes.length).toBeGreaterThan(12);
    sb.clearRequests();
    const maxDurationMs = 2_000;
    const started = Date.now();
    const io = captureIO();
    const code = await runApply(
      sb,
      dir,
      { paths: [file], maxDurationMs, connection: connection(sb, { rateLimitPerMin: 10, concurrency: 1 }) },
      io,
    );
    const deadline = started + maxDurationMs;
    expect([0, 2]).toContain(code);
    expect(io.out()).toMatch(/Deferred: \d+ changes? not started before --max-duration 2s; run the same apply again/);
    const posts = sb.requests().filter((r) => r.method === "POST");
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.length).toBeLessThan(plan.changes.length);
    for (const p of posts) expect(Date.parse(p.at)).toBeLessThanOrEqual(deadline);

    const again = captureIO();
    expect(await runApply(sb, dir, { paths: [file] }, again)).toBe(2);
    const counts = effectiveMutations(sb);
    for (const c of plan.changes) {
      expect(counts.get(changeKey(c)), c.id).toBe(1);
      expect(stateHolds(sb, c), c.id).toBe(true);
    }
  }, 20_000);
});
