/**
 * The window limiter on a fake clock: sleeping advances the clock, so minutes of pacing run in microseconds and every
 * figure is exact. Then the rate-limit headers it follows.
 */
import { describe, expect, it, vi } from "vitest";
import { parseRateLimitHeaders } from "../../src/api/rate-headers.js";
import {
  LimiterStoppedError,
  RateLimiter,
  windowBudget,
  type LimiterWait,
  type RateLimiterOptions,
} from "../../src/api/rate-limiter.js";
import { Prng } from "../../src/sandbox/prng.js";

const MINUTE = 60_000;

function fakeClock(): {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  advance: (ms: number) => void;
  slept: number[];
} {
  let t = 1_000_000;
  const slept: number[] = [];
  return {
    now: () => t,
    sleep: (ms) => {
      slept.push(ms);
      t += ms;
      return Promise.resolve();
    },
    advance: (ms) => {
      t += ms;
    },
    slept,
  };
}

function limiter(opts: Partial<RateLimiterOptions> & { perWindow: number }, clock = fakeClock()) {
  const waits: LimiterWait[] = [];
  const l = new RateLimiter({ now: clock.now, sleep: clock.sleep, onWait: (w) => waits.push(w), ...opts });
  return { l, clock, waits };
}

/** The most grants in any window of `windowMs` (a window ending at each grant is enough to find the maximum). */
function maxInAnyWindow(times: number[], windowMs: number): number {
  let max = 0;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    const t = times[i] ?? 0;
    while ((times[from] ?? t) <= t - windowMs) from += 1;
    max = Math.max(max, i - from + 1);
  }
  return max;
}

describe("window budget", () => {
  it("is 95 % of the service's limit, at least 1, unlimited when off", () => {
    expect(windowBudget(100)).toBe(95);
    expect(windowBudget(100 / 3)).toBe(31);
    expect(windowBudget(20)).toBe(19);
    expect(windowBudget(1)).toBe(1);
    expect(windowBudget(0)).toBe(Number.POSITIVE_INFINITY);
  });

  it("a share below one request a window becomes one request per longer window", async () => {
    const { l, clock } = limiter({ perWindow: 0.5 }); // 0.475 a minute: one request every 126.3 s
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      await l.acquire();
      times.push(clock.now());
    }
    expect(times.slice(1).map((t, i) => t - (times[i] ?? 0))).toEqual([126_316, 126_316, 126_316]);
  });
});

describe("sliding window limiter", () => {
  it("a run that fits in the window goes at once", async () => {
    const { l, clock, waits } = limiter({ perWindow: 100 });
    const start = clock.now();
    const grants = await Promise.all(Array.from({ length: 95 }, () => l.acquire()));
    expect(grants.map((g) => g.waitedMs)).toEqual(Array.from({ length: 95 }, () => 0));
    expect(grants.map((g) => g.ticket)).toEqual(Array.from({ length: 95 }, (_, i) => i + 1));
    expect(clock.now()).toBe(start);
    expect(waits).toEqual([]);
  });

  it("the 96th request waits for the first to leave the window, and says so once", async () => {
    const { l, clock, waits } = limiter({ perWindow: 100 });
    const start = clock.now();
    for (let i = 0; i < 95; i++) {
      await l.acquire();
      clock.advance(100);
    }
    const g = await l.acquire();
    expect(clock.now()).toBe(start + MINUTE);
    expect(g.waitedMs).toBe(MINUTE - 9_500);
    expect(waits).toEqual([{ delayMs: MINUTE - 9_500, reason: "window", budget: 95, windowMs: MINUTE }]);
  });

  it("1,000 requests queued at once: 95 in each window, the last one exactly 10 windows after the first", async () => {
    const { l, clock } = limiter({ perWindow: 100 });
    const start = clock.now();
    const times: number[] = [];
    await Promise.all(Array.from({ length: 1000 }, () => l.acquire().then(() => void times.push(clock.now()))));
    expect(maxInAnyWindow(times, MINUTE)).toBe(95);
    // the window's own bound: ceil(1000 / 95) = 11 windows' worth, so the last request goes 10 windows in
    expect((times.at(-1) ?? 0) - start).toBe(10 * MINUTE);
  });

  it("never exceeds the budget in any 60 s with callers arriving in bursts and lulls", async () => {
    const { l, clock } = limiter({ perWindow: 100 });
    const rng = new Prng(7);
    const times: number[] = [];
    // four callers (the client's concurrency), each thinking a random while between requests
    const caller = async (): Promise<void> => {
      for (let i = 0; i < 250; i++) {
        if (rng.next() < 0.3) clock.advance(Math.floor(rng.next() * 3_000));
        await l.acquire();
        times.push(clock.now());
      }
    };
    await Promise.all([caller(), caller(), caller(), caller()]);
    expect(times).toHaveLength(1000);
    expect(maxInAnyWindow(times, MINUTE)).toBe(95);
  });

  it("a request counts from when its answer came back, so the window outlasts the service's count of it", async () => {
    const { l, clock } = limiter({ perWindow: 3 }); // budget 2
    const start = clock.now();
    const a = await l.acquire();
    const b = await l.acquire();
    clock.advance(700);
    l.finished(b.ticket, {}); // b answered after 700 ms
    clock.advance(800);
    l.finished(a.ticket, {}); // a after 1.5 s
    await l.acquire(); // b leaves the window first: 60 s after its answer, not after it was sent
    expect(clock.now()).toBe(start + 700 + MINUTE);
    await l.acquire();
    expect(clock.now()).toBe(start + 1_500 + MINUTE);
    expect(l.inWindow()).toBe(2);
  });

  it("waiters are served in arrival order", async () => {
    const { l } = limiter({ perWindow: 3 }); // budget 2
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3, 4, 5].map((i) => l.acquire().then(() => void order.push(i))));
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("a pause holds back every caller, even with the limit off, and is not announced again", async () => {
    const { l, clock, waits } = limiter({ perWindow: 0 });
    const start = clock.now();
    l.pause(5_000);
    expect(l.pausedFor()).toBe(5_000);
    const grants = await Promise.all([l.acquire(), l.acquire(), l.acquire()]);
    expect(grants[0]?.waitedMs).toBe(5_000);
    expect(clock.now()).toBe(start + 5_000);
    expect(l.pausedFor()).toBe(0);
    expect(waits.map((w) => w.reason)).toEqual(["pause"]);
  });

  it("sleeps a second at most at a time, so a clock that jumps ahead is followed", async () => {
    const { l, clock } = limiter({ perWindow: 2 }); // budget 1
    await l.acquire();
    await l.acquire();
    expect(Math.max(...clock.slept)).toBe(1_000);
    expect(clock.slept).toHaveLength(60);
  });
});

describe("following the service's headers", () => {
  it("Remaining 0 with a Reset holds every request until the reset, even with the limit off", async () => {
    const { l, clock, waits } = limiter({ perWindow: 0 });
    const start = clock.now();
    const g = await l.acquire();
    l.finished(g.ticket, { limit: 100, remaining: 0, resetMs: 30_000 });
    expect(l.quotaFor()).toBe(30_000); // what the client checks against its retry budget before sending
    expect(l.pausedFor()).toBe(0);
    await l.acquire();
    expect(clock.now()).toBe(start + 30_000);
    expect(waits).toEqual([expect.objectContaining({ reason: "quota", delayMs: 30_000 })]);
    expect(l.quotaFor()).toBe(0);
    // after the reset the old count is forgotten: the next goes at once
    const next = await l.acquire();
    expect(next.waitedMs).toBe(0);
  });

  it("counts the requests sent after the one whose answer carried Remaining", async () => {
    const { l, clock } = limiter({ perWindow: 0 });
    const start = clock.now();
    const first = await l.acquire();
    await l.acquire();
    await l.acquire(); // two more left before the first's answer came back with remaining 2
    l.finished(first.ticket, { remaining: 2, resetMs: 10_000 });
    await l.acquire();
    expect(clock.now()).toBe(start + 10_000);
  });

  it("an older answer does not replace a newer one", async () => {
    const { l, clock } = limiter({ perWindow: 0 });
    const start = clock.now();
    const a = await l.acquire();
    const b = await l.acquire();
    l.finished(b.ticket, { remaining: 0, resetMs: 20_000 });
    l.finished(a.ticket, { remaining: 50, resetMs: 20_000 });
    await l.acquire();
    expect(clock.now()).toBe(start + 20_000);
  });

  it("a Limit below ours shrinks the budget; a policy over a longer window is spread over ours", async () => {
    const { l } = limiter({ perWindow: 100 });
    expect(l.budget).toBe(95);
    l.finished(1, { limit: 40 });
    expect(l.budget).toBe(38);
    l.finished(2, { limit: 120, windowMs: 2 * MINUTE }); // 60 a minute
    expect(l.budget).toBe(57);
    l.finished(3, { limit: 10, windowMs: 1_000 }); // 10 a second: kept whole in our minute
    expect(l.budget).toBe(9);
    l.finished(4, { limit: 1000 }); // never above what we were told
    expect(l.budget).toBe(95);
  });

  it("a shrunk budget holds requests until enough of the window has passed", async () => {
    const { l, clock } = limiter({ perWindow: 100 });
    const start = clock.now();
    for (let i = 0; i < 20; i++) await l.acquire();
    l.finished(20, { limit: 10 }); // budget 9, 20 already in the window
    await l.acquire();
    expect(clock.now()).toBe(start + MINUTE);
  });
});

describe("rate-limit headers", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("reads the IETF draft's separate fields and the policy", () => {
    expect(
      parseRateLimitHeaders({ "ratelimit-limit": "100", "ratelimit-remaining": "7", "ratelimit-reset": "12" }, now),
    ).toEqual({
      limit: 100,
      remaining: 7,
      resetMs: 12_000,
    });
    expect(parseRateLimitHeaders({ "ratelimit-limit": "100, 100;w=60", "ratelimit-policy": "100;w=60" }, now)).toEqual({
      limit: 100,
      windowMs: 60_000,
    });
  });

  it("reads the single RateLimit field of later drafts, in both shapes", () => {
    // a limit with its policies: the most restrictive per minute (10 with no window stated counts as 10 a minute)
    expect(parseRateLimitHeaders({ "ratelimit-limit": "10, 10;w=1, 1000;w=60" }, now)).toEqual({ limit: 10 });
    expect(parseRateLimitHeaders({ ratelimit: "limit=100, remaining=0, reset=30" }, now)).toEqual({
      limit: 100,
      remaining: 0,
      resetMs: 30_000,
    });
    expect(
      parseRateLimitHeaders({ ratelimit: '"default";r=3;t=20', "ratelimit-policy": '"default";q=100;w=60' }, now),
    ).toEqual({ limit: 100, windowMs: 60_000, remaining: 3, resetMs: 20_000 });
  });

  it("reads X-RateLimit-*, with a reset in seconds or as a Unix time against the response's Date", () => {
    expect(
      parseRateLimitHeaders({ "x-ratelimit-limit": "60", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "5" }, now),
    ).toEqual({
      limit: 60,
      remaining: 0,
      resetMs: 5_000,
    });
    const serverNow = now + 3_600_000; // our clock is an hour behind the server's: its Date is the reference
    const reset = String((serverNow + 40_000) / 1000);
    expect(
      parseRateLimitHeaders(
        { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset, date: new Date(serverNow).toUTCString() },
        now,
      ),
    ).toEqual({
      remaining: 0,
      resetMs: 40_000,
    });
  });

  it("ignores what it cannot read, and takes the most careful of two sources", () => {
    expect(parseRateLimitHeaders({ "ratelimit-remaining": "lots", "x-ratelimit-limit": "" }, now)).toEqual({});
    expect(parseRateLimitHeaders({}, now)).toEqual({});
    expect(
      parseRateLimitHeaders(
        {
          "ratelimit-limit": "100",
          "x-ratelimit-limit": "80",
          "ratelimit-remaining": "9",
          "x-ratelimit-remaining": "4",
          "ratelimit-reset": "10",
          "x-ratelimit-reset": "20",
        },
        now,
      ),
    ).toEqual({ limit: 80, remaining: 4, resetMs: 20_000 });
  });
});

describe("stopping", () => {
  it("a request waiting for its slot gives up at once on the stop, its timer cancelled; a stopped caller is refused at once", async () => {
    // the real sleep on fake timers: the timers it sets are counted exactly
    vi.useFakeTimers();
    try {
      const l = new RateLimiter({ perWindow: 1, share: 1, windowMs: MINUTE });
      await l.acquire();
      const stop = new AbortController();
      const settled = l.acquire(undefined, stop.signal).catch((err: unknown) => err);
      await vi.advanceTimersByTimeAsync(0);
      expect(vi.getTimerCount()).toBe(1); // it sleeps towards its slot
      stop.abort();
      expect(await settled).toBeInstanceOf(LimiterStoppedError);
      await vi.advanceTimersByTimeAsync(0);
      expect(vi.getTimerCount()).toBe(0);
      await expect(l.acquire(undefined, stop.signal)).rejects.toBeInstanceOf(LimiterStoppedError);
    } finally {
      vi.useRealTimers();
    }
  });

  it("callers queued behind a stopped one give up too, and a caller without the stop is still served in order", async () => {
    const { l, clock } = limiter({ perWindow: 1, share: 1 });
    await l.acquire();
    const stop = new AbortController();
    const a = l.acquire(undefined, stop.signal).catch((err: unknown) => err);
    const b = l.acquire(undefined, stop.signal).catch((err: unknown) => err);
    const other = l.acquire();
    stop.abort();
    expect(await a).toBeInstanceOf(LimiterStoppedError);
    expect(await b).toBeInstanceOf(LimiterStoppedError);
    const t0 = clock.now();
    await other;
    // the stopped ones took no slot: the other caller got the next one, a window after the first grant
    expect(clock.now() - t0).toBeLessThanOrEqual(MINUTE);
    expect(l.inWindow()).toBe(1);
  });
});
