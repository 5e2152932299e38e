/**
 * What a service says about its limit, over real HTTP from a tiny local server: 429s retried on a time budget rather
 * than an attempt count, a Retry-After beyond the budget failing at once, and RateLimit headers followed before the
 * service has to refuse anything. Requests are counted on the server; nothing is timed.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/api/index.js";
import { sendJson, localHarness } from "./helpers.js";

const { server, client } = localHarness({
  apiKey: "rl-test-key",
  rateLimitPerMin: 0,
  retryBaseMs: 5,
  timeoutMs: 2_000,
});

describe("429 is not a failure", () => {
  it("seven 429s in a row are waited out although maxAttempts is 3, for a POST too", async () => {
    const s = await server((_req, res, _body, n) => {
      if (n <= 7) return sendJson(res, 429, { detail: "slow down" }, { "retry-after": "0.02" });
      return sendJson(res, 200, { ids: [4] });
    });
    const { c, events } = client(s.baseUrl, { maxAttempts: 3 });
    expect(await c.bulkAbort([4])).toEqual({ ids: [4] });
    expect(s.requests).toHaveLength(8);
    expect(c.stats().rateLimited).toBe(7);
    expect(events.filter((e) => e.type === "rate-limited" && e.source === "server")).toHaveLength(7);
    expect(events.filter((e) => e.type === "retry").map((e) => (e.type === "retry" ? e.attempt : 0))).toEqual([
      2, 3, 4, 5, 6, 7, 8,
    ]);
  });

  it("other failures still stop at maxAttempts, 429s in between not counted", async () => {
    const s = await server((_req, res, _body, n) =>
      n % 2 === 1
        ? sendJson(res, 429, { detail: "later" }, { "retry-after": "0.01" })
        : sendJson(res, 503, { detail: "down" }),
    );
    const { c } = client(s.baseUrl, { maxAttempts: 3 });
    const err = await c.listWorkflows().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
    // 429, 503, 429, 503, 429, 503: three failed attempts
    expect(s.requests).toHaveLength(6);
  });

  it("a Retry-After longer than what is left of the retry budget fails at once, saying so; nothing more is sent", async () => {
    const s = await server((_req, res) => sendJson(res, 429, { detail: "quota exhausted" }, { "retry-after": "600" }));
    const { c } = client(s.baseUrl, { maxRetryTimeMs: 5_000 });
    const err = await c.getInstance(5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect((err as Error).message).toMatch(
      /asked to wait 600 s \(Retry-After\), longer than the 5 s left of its retry budget of 5 s/,
    );
    // a later call is refused unsent while the pause lasts
    const again = await c.listWorkflows().catch((e: unknown) => e);
    expect((again as Error).message).toMatch(/not sent: the service asked to wait/);
    expect(s.requests).toHaveLength(1);
  });
});

describe("RateLimit headers", () => {
  it("Remaining 0 with a Reset holds the next request until the reset, so the service refuses nothing", async () => {
    let resetAt = 0;
    const s = await server((_req, res, _body, n) => {
      // the service's own rule: nothing before the reset it announced
      if (Date.now() < resetAt) return sendJson(res, 429, { detail: "too early" }, { "retry-after": "1" });
      if (n === 1) {
        // 2 s: the wait, a little under it by the time the next call comes, stays over the 1 s that is announced
        resetAt = Date.now() + 2_000;
        return sendJson(res, 200, [], { "ratelimit-limit": "100", "ratelimit-remaining": "0", "ratelimit-reset": "2" });
      }
      return sendJson(res, 200, []);
    });
    const { c, events } = client(s.baseUrl);
    await c.listWorkflows();
    await c.listWorkflows();
    expect(s.requests).toHaveLength(2);
    expect(c.stats().rateLimited).toBe(0);
    expect(c.stats().rateLimitWaitMs).toBeGreaterThan(0);
    expect(events).toContainEqual(expect.objectContaining({ type: "rate-limited", source: "client", reason: "quota" }));
  });

  it("a quota used up until a reset beyond the retry budget fails the next call at once, unsent", async () => {
    const s = await server((_req, res) =>
      sendJson(res, 200, [], {
        "x-ratelimit-limit": "5000",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": "3600",
      }),
    );
    const { c } = client(s.baseUrl, { maxRetryTimeMs: 10_000 });
    await c.listWorkflows();
    const err = await c.listWorkflows().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /not sent: the service asked to wait 3600 s \(its RateLimit reset\), longer than the retry budget of 10 s/,
    );
    expect(s.requests).toHaveLength(1);
  });

  it("a 429 with X-RateLimit-Remaining 0 and a reset but no Retry-After waits for the reset", async () => {
    const s = await server((_req, res, _body, n) =>
      n === 1
        ? sendJson(res, 429, { detail: "later" }, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "2" })
        : sendJson(res, 200, []),
    );
    const { c, events } = client(s.baseUrl);
    await c.listWorkflows();
    expect(events).toContainEqual({ type: "rate-limited", delayMs: 2_000, source: "server" });
    expect(s.requests).toHaveLength(2);
  });
});
