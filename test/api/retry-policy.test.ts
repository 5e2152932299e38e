/**
 * The client's retry policy alone (src/api/retry-policy.ts): what it decides after each attempt of a call, from what
 * the attempt got and what the call has spent. The client carrying it out is tested against the sandbox
 * (test/api/client.test.ts and the hardening tests); here every branch is driven directly.
 */
import { describe, expect, it } from "vitest";
import { nextStep, type AttemptOutcome, type RetryPolicy, type RetryState } from "../../src/api/retry-policy.js";

const POLICY: RetryPolicy = { maxAttempts: 3, maxRetryTimeMs: 10_000, retryBaseMs: 100, retryMaxDelayMs: 1_000 };
const FIRST: RetryState = { attempt: 1, failures: 0, retryTimeMs: 0 };
const ONE = (): number => 1; // the jitter's largest draw: backoff is base · 2^(attempt-1), capped

const answer = (method: "GET" | "POST", status: number, more: Partial<AttemptOutcome> = {}): AttemptOutcome =>
  ({ kind: "response", method, status, ms: 50, ...more }) as AttemptOutcome;
const lost = (method: "GET" | "POST", neverSent: boolean, retryable = true): AttemptOutcome => ({
  kind: "failure",
  method,
  ms: 50,
  neverSent,
  retryable,
});

describe("the client's retry policy", () => {
  it("a 2xx is done; the first exchange is not retry time", () => {
    expect(nextStep(answer("GET", 200), FIRST, POLICY, false, ONE)).toEqual({ action: "done", state: FIRST });
    const second = nextStep(answer("GET", 204), { attempt: 2, failures: 1, retryTimeMs: 100 }, POLICY, true, ONE);
    expect(second).toEqual({ action: "done", state: { attempt: 2, failures: 1, retryTimeMs: 150 } });
  });

  it("401 refuses the key; 403 does only before anything was answered", () => {
    expect(nextStep(answer("GET", 401), FIRST, POLICY, true, ONE).action).toBe("key-refused");
    expect(nextStep(answer("GET", 403), FIRST, POLICY, false, ONE).action).toBe("key-refused");
    expect(nextStep(answer("GET", 403), FIRST, POLICY, true, ONE)).toMatchObject({
      action: "fail",
      checkBaseUrl: false,
    });
  });

  it("a GET's 502, 503, 504 is retried with backoff until the failed attempts are spent", () => {
    let state = FIRST;
    const delays: number[] = [];
    for (;;) {
      const step = nextStep(answer("GET", 503), state, POLICY, true, ONE);
      if (step.action !== "retry") {
        expect(step.action).toBe("fail");
        break;
      }
      delays.push(step.delayMs);
      state = { ...step.state, attempt: state.attempt + 1 };
    }
    expect(delays).toEqual([100, 200]); // the third failure is the last of maxAttempts 3
    expect(state.failures).toBe(2);
  });

  it("a GET's Retry-After sets the retry's delay, capped by the largest backoff; 0 retries at once", () => {
    expect(nextStep(answer("GET", 503, { retryAfterMs: 700 }), FIRST, POLICY, true, ONE)).toMatchObject({
      action: "retry",
      delayMs: 700,
    });
    expect(nextStep(answer("GET", 503, { retryAfterMs: 60_000 }), FIRST, POLICY, true, ONE)).toMatchObject({
      action: "retry",
      delayMs: 1_000,
    });
    expect(nextStep(answer("GET", 503, { retryAfterMs: 0 }), FIRST, POLICY, true, ONE)).toMatchObject({
      action: "retry",
      delayMs: 0,
    });
  });

  it("a retry that would pass the time budget is not taken", () => {
    const spent = { attempt: 2, failures: 1, retryTimeMs: 9_900 };
    expect(nextStep(answer("GET", 502), spent, POLICY, true, ONE)).toMatchObject({ action: "fail" });
  });

  it("a POST answered 5xx, or lost after it was sent, has an unknown outcome and is never repeated", () => {
    for (const status of [500, 502, 503, 504])
      expect(nextStep(answer("POST", status), FIRST, POLICY, true, ONE).action).toBe("outcome-unknown");
    expect(nextStep(lost("POST", false), FIRST, POLICY, true, ONE).action).toBe("outcome-unknown");
    // surely never sent: safe to repeat
    expect(nextStep(lost("POST", true), FIRST, POLICY, true, ONE)).toMatchObject({ action: "retry", delayMs: 100 });
  });

  it("a 429 pauses and retries, POSTs too, and is no failure; too long a wait gives up saying why", () => {
    const step = nextStep(answer("POST", 429, { retryAfterMs: 2_000 }), FIRST, POLICY, true, ONE);
    expect(step).toEqual({
      action: "pause",
      delayMs: 2_000,
      waitFor: "Retry-After",
      state: { attempt: 1, failures: 0, retryTimeMs: 2_000 },
    });
    expect(nextStep(answer("GET", 429, { quotaResetMs: 3_000 }), FIRST, POLICY, true, ONE)).toMatchObject({
      delayMs: 3_000,
      waitFor: "its RateLimit reset",
    });
    // nothing said: backoff, at least a second; a zero Retry-After is read as absent
    expect(nextStep(answer("GET", 429, { retryAfterMs: 0 }), FIRST, POLICY, true, ONE)).toMatchObject({
      delayMs: 1_000,
      waitFor: "backoff",
    });
    expect(nextStep(answer("GET", 429, { retryAfterMs: 20_000 }), FIRST, POLICY, true, ONE)).toMatchObject({
      action: "wait-too-long",
      delayMs: 20_000,
      leftMs: 10_000,
    });
  });

  it("429s alone never run out of attempts, only out of time", () => {
    let state = FIRST;
    let pauses = 0;
    for (;;) {
      const step = nextStep(answer("GET", 429, { retryAfterMs: 1_500 }), state, POLICY, true, ONE);
      if (step.action !== "pause") {
        expect(step.action).toBe("wait-too-long");
        break;
      }
      pauses++;
      state = { ...step.state, attempt: state.attempt + 1 };
    }
    expect(pauses).toBeGreaterThan(POLICY.maxAttempts);
    expect(state.failures).toBe(0);
  });

  it("a GET's 404 before anything was answered asks whether the base URL is wrong; an unreachable service is said once", () => {
    expect(nextStep(answer("GET", 404), FIRST, POLICY, false, ONE)).toMatchObject({
      action: "fail",
      checkBaseUrl: true,
    });
    expect(nextStep(answer("GET", 404), FIRST, POLICY, true, ONE)).toMatchObject({
      action: "fail",
      checkBaseUrl: false,
    });
    const spent = { attempt: 3, failures: 2, retryTimeMs: 300 };
    expect(nextStep(lost("GET", true), spent, POLICY, false, ONE)).toMatchObject({ action: "fail", unreachable: true });
    expect(nextStep(lost("GET", true), spent, POLICY, true, ONE)).toMatchObject({ action: "fail", unreachable: false });
    expect(nextStep(lost("GET", false, false), FIRST, POLICY, false, ONE)).toMatchObject({
      action: "fail",
      unreachable: false,
    });
  });
});
