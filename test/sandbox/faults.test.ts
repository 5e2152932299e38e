/** Fault flags: 503 share (seeded), 429 + Retry-After, connection reset after an applied mutation, latency. */
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { NOW, call, postJson, start, statusOf } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 300 });
});
afterAll(() => sb.close());
afterEach(() => sb.setFaults({ latencyMs: 0, failRate: 0, rateLimitPerMin: 0, resetRate: 0 }));

async function statuses(target: RunningSandbox, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < n; k++) out.push((await call(target, "/processes/")).status);
  return out;
}

describe("fail rate", () => {
  it("answers about the given share with 503 {detail}, reproducibly for the same seed", async () => {
    const a = await start({ instances: 10, seed: 3, failRate: 0.3 });
    const b = await start({ instances: 10, seed: 3, failRate: 0.3 });
    try {
      const sa = await statuses(a, 120);
      const sb2 = await statuses(b, 120);
      expect(sa).toEqual(sb2);
      const failed = sa.filter((s) => s === 503).length;
      expect(failed).toBeGreaterThan(15);
      expect(failed).toBeLessThan(60);
      expect(sa.filter((s) => s === 200).length).toBe(120 - failed);
      expect(a.requests().filter((e) => e.status === 503)).toHaveLength(failed);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("a failed mutation is not applied", async () => {
    sb.setFaults({ failRate: 1 });
    const id = sb.store.list(1042).find((i) => statusOf(i) === "running")?.id ?? 0;
    const res = await postJson<{ detail: string }>(sb, "/instances/bulk/abort", { ids: [id] });
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/unavailable/i);
    expect(sb.store.status(id)).toBe("running");
  });
});

describe("rate limit", () => {
  it("429 with Retry-After beyond the limit, per key; off again with 0", async () => {
    sb.setFaults({ rateLimitPerMin: 3 });
    expect(await statuses(sb, 3)).toEqual([200, 200, 200]);
    const limited = await call<{ detail: string }>(sb, "/processes/");
    expect(limited.status).toBe(429);
    const retry = Number(limited.headers.get("retry-after"));
    expect(Number.isInteger(retry)).toBe(true);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(limited.body.detail).toMatch(/Rate limit/);
    expect((await call(sb, "/processes/", { key: "lead" })).status).toBe(200);
    expect(sb.requests().at(-2)?.status).toBe(429);
    sb.setFaults({ rateLimitPerMin: 0 });
    expect((await call(sb, "/processes/")).status).toBe(200);
  });
});

describe("reset", () => {
  it("applies the mutation, then closes the connection without an answer; the log says reset", async () => {
    sb.setFaults({ resetRate: 1 });
    sb.clearRequests();
    const inst = sb.store.list(1042).find((i) => statusOf(i) === "running" && i.activeStepIds.includes(20111));
    const id = inst?.id ?? 0;
    await expect(postJson(sb, `/instances/${id}/complete_step/`, { step_id: 20111 })).rejects.toThrow();
    expect(sb.store.get(id)?.activeStepIds).toEqual([20112]);
    expect(sb.store.get(id)?.stepCompletedTimes.get(20111)).toBe(NOW.getTime());
    // reads are never reset
    expect((await call(sb, `/instances/${id}/`)).status).toBe(200);
    const log = sb.requests();
    expect(log[0]).toMatchObject({
      method: "POST",
      path: `/api/instances/${id}/complete_step/`,
      status: 200,
      reset: true,
    });
    expect(log[1]?.reset).toBeUndefined();
    // failed mutations are answered normally
    expect((await postJson(sb, `/instances/${id}/complete_step/`, { step_id: 20111 })).status).toBe(400);
  });

  it("bulk abort under reset: applied although the client saw an error", async () => {
    sb.setFaults({ resetRate: 1 });
    const id = sb.store.list(1043).find((i) => statusOf(i) === "running")?.id ?? 0;
    await expect(postJson(sb, "/instances/bulk/abort", { ids: [id] })).rejects.toThrow();
    expect(sb.store.status(id)).toBe("aborted");
    expect(sb.requests().at(-1)).toMatchObject({ path: "/api/instances/bulk/abort", reset: true, status: 200 });
  });
});

describe("latency and fault settings", () => {
  it("requests still answer under latency", async () => {
    sb.setFaults({ latencyMs: 30 });
    const [a, b] = await Promise.all([call(sb, "/processes/"), call(sb, "/processes/", { key: "member" })]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
  });

  it("rejects out-of-range fault values", async () => {
    expect(() => sb.setFaults({ failRate: 1.5 })).toThrow(RangeError);
    expect(() => sb.setFaults({ latencyMs: -1 })).toThrow(RangeError);
    expect(() => sb.setFaults({ resetRate: Number.NaN })).toThrow(RangeError);
    await expect(startSandbox({ port: 0, instances: 1, failRate: -0.1 })).rejects.toThrow(RangeError);
    await expect(startSandbox({ port: 0, instances: 1.5 })).rejects.toThrow(RangeError);
    expect((await call(sb, "/processes/")).status).toBe(200);
  });
});
