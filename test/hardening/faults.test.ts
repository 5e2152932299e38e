/**
 * 1,000 planned changes applied against a service that fails on purpose: 15 % of requests answered 503, a rate limit
 * that answers 429 again and again, latency spikes, and 10 % of the mutations applied and then answered by a dropped
 * connection. Every change lands exactly once — proven by the sandbox's request log (successful mutations per
 * instance and step) and by the final state in its store.
 *
 * The sandbox limits over a sliding 60 s window, so a real 429 would ask to wait up to a minute. Date is faked (timers
 * are not) and, each time the window is nearly full, moved forward until its oldest request is 59.3 s old: every
 * episode of 429s then asks for about 1 s, and the run stays short.
 */
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ClientEvent } from "../../src/api/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import {
  captureIO,
  changeKey,
  effectiveMutations,
  makePlan,
  MIXED_RULES,
  runApply,
  stateHolds,
  tempDir,
} from "../apply/helpers.js";

let sb: RunningSandbox | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await sb?.close();
  sb = undefined;
});

const RATE_LIMIT = 300;
/** jump the clock this many accepted requests before the window is full (more than the requests in flight) */
const MARGIN = 12;

describe("exactly once under faults", () => {
  it("1,000 changes under 503s, repeated 429s, latency spikes and dropped connections: each applied once", async () => {
    sb = await startSandbox({ port: 0, instances: 3400, seed: 11 });
    const s = sb;
    const dir = await tempDir();
    const { file, plan } = await makePlan(s, dir, MIXED_RULES);
    expect(plan.changes.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(plan.changes.map((c) => c.kind))).toEqual(new Set(["complete_step", "save_step", "abort"]));

    s.clearRequests();
    s.setFaults({ failRate: 0.15, resetRate: 0.1, latencyMs: 2, rateLimitPerMin: RATE_LIMIT });
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    // what the sandbox's window holds, as seen from here (the fake time of each request it let through)
    const window: number[] = [];
    let jumps = 0;
    let exchanges = 0;
    let spikes = 0;
    const onEvent = (e: ClientEvent): void => {
      if (e.type !== "request") return;
      exchanges += 1;
      // latency spikes: every 90th exchange starts 12 slow ones (well under the client's timeout)
      if (exchanges % 90 === 0) {
        s.setFaults({ latencyMs: 150 });
        spikes += 1;
      } else if (exchanges % 90 === 12) s.setFaults({ latencyMs: 2 });
      if (e.status === 429) return; // refusals do not count in the window
      const now = Date.now();
      window.push(now);
      while ((window[0] ?? now) <= now - 60_000) window.shift();
      // nearly full: age the window so that its oldest request leaves it 0.7 s from now; the 429s that follow ask
      // for 1 s instead of up to a minute
      const jump = 59_300 - (now - (window[0] ?? now));
      if (window.length >= RATE_LIMIT - MARGIN && jump > 0) {
        vi.setSystemTime(now + jump);
        jumps += 1;
      }
    };
    const io = captureIO();
    let code: number;
    try {
      code = await runApply(
        s,
        dir,
        {
          paths: [file],
          batchSize: 25,
          tuning: { maxSendAttempts: 10, client: { maxAttempts: 12, maxRetryTimeMs: 3_600_000, onEvent } },
        },
        io,
      );
    } finally {
      vi.useRealTimers();
      s.setFaults({ failRate: 0, resetRate: 0, latencyMs: 0, rateLimitPerMin: 0 });
    }

    const log = s.requests();
    // every fault happened, on mutations too
    expect(log.filter((r) => r.status === 429).length, "429s").toBeGreaterThanOrEqual(jumps);
    expect(jumps).toBeGreaterThanOrEqual(3);
    expect(spikes).toBeGreaterThan(3);
    expect(log.some((r) => r.method === "POST" && r.status === 503)).toBe(true);
    expect(log.some((r) => r.method === "GET" && r.status === 503)).toBe(true);
    expect(log.filter((r) => r.method === "POST" && r.reset === true).length).toBeGreaterThan(20);
    expect(log.some((r) => r.method === "POST" && r.status === 429)).toBe(true);

    // exactly once: one effective mutation per planned change, nothing else; and the state shows each of them
    const counts = effectiveMutations(s);
    const repeated = plan.changes
      .filter((c) => counts.get(changeKey(c)) !== 1)
      .map((c) => `${c.id}: ${counts.get(changeKey(c)) ?? 0}`);
    expect(repeated).toEqual([]);
    expect([...counts.keys()].sort()).toEqual(plan.changes.map(changeKey).sort());
    expect(plan.changes.filter((c) => !stateHolds(s, c)).map((c) => c.id)).toEqual([]);

    expect(code, io.out().slice(0, 2000)).toBe(2);
    expect(io.out()).toMatch(new RegExp(`Apply complete: ${plan.changes.length} changes applied`));
    expect(io.out()).toMatch(/answered 429/);
    expect(io.out()).toMatch(/with unknown outcome, decided by reading/);
    const journal = (await readFile(`${file}.journal.jsonl`, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; change?: string });
    const done = journal.filter((l) => l.event === "done").map((l) => l.change);
    expect(new Set(done).size).toBe(plan.changes.length);
    expect(done).toHaveLength(plan.changes.length);
  }, 120_000);
});
