/**
 * The client under a run's stop (ClientOptions.signal; src/cli/signals.ts sets it on SIGTERM): nothing starts after
 * it, a request waiting for the rate window or a retry's backoff gives up at once, sending nothing, and a request
 * in flight is answered. Counted on a tiny local server; the waits cut short would outlast the test's timeout.
 */
import { describe, expect, it } from "vitest";
import { StoppedNotSentError } from "../../src/api/index.js";
import { sendJson, localHarness } from "./helpers.js";

const { server, client } = localHarness({
  apiKey: "stop-test-key",
  rateLimitPerMin: 0,
  retryBaseMs: 5,
  timeoutMs: 2_000,
});

describe("a stopping client", () => {
  it("sends nothing once stopped", async () => {
    const s = await server((_req, res) => sendJson(res, 200, []));
    const stop = new AbortController();
    stop.abort();
    const { c } = client(s.baseUrl, { signal: stop.signal });
    await expect(c.listWorkflows()).rejects.toBeInstanceOf(StoppedNotSentError);
    expect(s.requests).toHaveLength(0);
  });

  it("a request waiting a minute for the window gives up at once; the one in flight is answered", async () => {
    let answer: (() => void) | undefined;
    const s = await server((_req, res) => {
      // the first request is held until the second one waits for the window
      answer = () => sendJson(res, 200, []);
    });
    const stop = new AbortController();
    const { c } = client(s.baseUrl, { signal: stop.signal, rateLimitPerMin: 1, rateLimitWindowMs: 60_000 });
    const first = c.listWorkflows();
    const second = c.listWorkflows().catch((e: unknown) => e);
    while (answer === undefined) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    answer();
    expect(await first).toEqual([]);
    const err = await second;
    expect(err).toBeInstanceOf(StoppedNotSentError);
    expect(String((err as Error).message)).toMatch(/^listing workflows: not sent, the run is stopping$/);
    expect(s.requests).toHaveLength(1);
  });

  it("a retry's backoff is cut short: the GET is not repeated", async () => {
    const s = await server((_req, res) => sendJson(res, 503, { detail: "down" }));
    const stop = new AbortController();
    // a backoff of up to a minute, which the stop cuts short
    const { c } = client(s.baseUrl, {
      signal: stop.signal,
      retryBaseMs: 60_000,
      retryMaxDelayMs: 60_000,
      maxRetryTimeMs: 600_000,
      onEvent: (e) => (e.type === "retry" ? stop.abort() : undefined),
    });
    await expect(c.getInstance(5)).rejects.toBeInstanceOf(StoppedNotSentError);
    expect(s.requests).toHaveLength(1);
  });
});
