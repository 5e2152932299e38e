/** Every planned change is applied exactly once, whatever the service does: 503s, latency, connection resets. */
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  changeKey,
  captureIO,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  runApply,
  stateHolds,
  tempDir,
} from "./helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe("apply exactly once", () => {
  it("applies every change of a mixed plan once, with 503s, latency and resets after the mutation", async () => {
    sb = await startSandbox({ port: 0, instances: 300, seed: 7 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const kinds = new Set(plan.changes.map((c) => c.kind));
    expect(kinds).toEqual(new Set(["complete_step", "save_step", "abort"]));
    expect(plan.changes.length).toBeGreaterThan(20);

    sb.clearRequests();
    // 20 % of requests answered 503 (GETs are retried by the client, POSTs are outcome unknown), 30 % of the
    // mutations applied and then answered by a closed connection; attempts are raised so that a run of bad draws
    // cannot exhaust them (0.2^10 per change)
    sb.setFaults({ failRate: 0.2, latencyMs: 5, resetRate: 0.3 });
    const io = captureIO();
    const code = await runApply(
      sb,
      dir,
      { paths: [file], batchSize: 7, tuning: { maxSendAttempts: 10, client: { maxAttempts: 10 } } },
      io,
    );
    sb.setFaults({ failRate: 0, latencyMs: 0, resetRate: 0 });

    const log = sb.requests();
    // the faults did happen, on mutations too
    expect(log.some((r) => r.method === "POST" && r.reset === true)).toBe(true);
    expect(log.some((r) => r.method === "POST" && r.status === 503)).toBe(true);

    const counts = effectiveMutations(sb);
    for (const c of plan.changes) {
      expect(counts.get(changeKey(c)), `${c.id}`).toBe(1);
      expect(stateHolds(sb, c), `${c.id}`).toBe(true);
    }
    // nothing beyond the plan
    expect([...counts.keys()].sort()).toEqual(plan.changes.map(changeKey).sort());
    expect(code, io.out() + io.err()).toBe(2);
    expect(io.out()).toMatch(new RegExp(`Apply complete: ${plan.changes.length} changes applied`));
    expect(io.out()).toMatch(/with unknown outcome, decided by reading/);
  });

  it("a second apply of the same plan sends nothing and exits 0 with --detailed-exitcode", async () => {
    sb = await startSandbox({ port: 0, instances: 150, seed: 3 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    expect(await runApply(sb, dir, { paths: [file] })).toBe(2);
    sb.clearRequests();
    const io = captureIO();
    expect(await runApply(sb, dir, { paths: [file] }, io)).toBe(0);
    expect(sb.requests()).toEqual([]);
    expect(io.out()).toContain(`${plan.changes.length} already applied by an earlier run`);
  });

  it("refused POSTs (429 with a short Retry-After) are retried and still applied once", async () => {
    sb = await startSandbox({ port: 0, instances: 150, seed: 5 });
    const dir = await tempDir();
    const { file, plan } = await makePlan(sb, dir, MIXED_RULES);
    const limit = plan.changes.length + 10;
    // The sandbox limits over a sliding 60 s window: fill it, then move the clock (Date only, still running) to the
    // window's last 1.5 s, so its Retry-After is 1-2 s rather than a minute. The sandbox runs in this process.
    sb.setFaults({ rateLimitPerMin: limit });
    for (let i = 0; i < limit; i++)
      await fetch(`${sb.baseUrl}/processes/`, { headers: { authorization: "Api-Key sandbox-admin" } });
    sb.clearRequests();
    const { vi } = await import("vitest");
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    try {
      vi.setSystemTime(Date.now() + 58_500);
      const io = captureIO();
      const code = await runApply(sb, dir, { paths: [file] }, io);
      expect(code, io.out() + io.err()).toBe(2);
      expect(sb.requests().filter((r) => r.status === 429).length).toBeGreaterThan(0);
      const counts = effectiveMutations(sb);
      for (const c of plan.changes) expect(counts.get(changeKey(c)), c.id).toBe(1);
      expect(io.out()).toMatch(/answered 429/);
    } finally {
      vi.useRealTimers();
      sb.setFaults({ rateLimitPerMin: 0 });
    }
  });
});
