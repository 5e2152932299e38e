/**
 * What the client does after each attempt of a call, as a pure function of what the attempt got and what the call
 * has spent so far: return the answer, retry after a delay, pause every caller for a 429, or fail — and how. The
 * client (./client.ts) carries the decision out (sleeps, pauses the limiter, builds the error, emits the events);
 * test/api/retry-policy.test.ts checks the policy alone.
 *
 * - A POST that may have reached the service is never repeated: a 5xx answer or a lost connection after sending is
 *   an unknown outcome, for apply to settle by reading (src/apply/verify.ts).
 * - A 429 is a refusal, not a failure: nothing was applied, so POSTs retry too, for as long as the call's time budget
 *   lasts; the wait is the service's Retry-After, else its RateLimit reset when it says nothing is left, else backoff
 *   (a zero is read as absent: retrying at once would only be refused again).
 * - A GET's gateway answer (502, 503, 504) and a failure of the connection that is worth repeating are retried with
 *   backoff, bounded by failed attempts and by the time budget.
 * - 401, or a 403 before any request succeeded, refuses the key itself (a later 403 is one workflow's permission).
 */
import type { HttpResult } from "./http.js";
import type { RateLimitInfo } from "./rate-headers.js";
import { RETRYABLE_STATUS, backoffDelay, parseRetryAfter } from "./retry.js";

/** POST answers after which the change may or may not have been applied. */
export const POST_OUTCOME_UNKNOWN_STATUS = new Set([500, 502, 503, 504]);

export interface RetryPolicy {
  /** failed attempts of one call (429s do not count) */
  maxAttempts: number;
  /** the deadline of one call's retries: backoff, 429 waits and the repeated exchanges */
  maxRetryTimeMs: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
}

/** What one call has spent before this attempt's answer is judged. */
export interface RetryState {
  /** this attempt's number, from 1 */
  attempt: number;
  /** failed attempts before this one (429s are not failures) */
  failures: number;
  /** time spent retrying before this attempt's exchange */
  retryTimeMs: number;
}

/** What an attempt got, as far as the policy cares. */
export type AttemptOutcome =
  | {
      kind: "response";
      method: "GET" | "POST";
      status: number;
      /** how long the exchange took */
      ms: number;
      /** the answer's Retry-After in ms, when it has one that parses */
      retryAfterMs?: number;
      /** the RateLimit reset in ms, when the answer says nothing is left */
      quotaResetMs?: number;
    }
  | { kind: "failure"; method: "GET" | "POST"; ms: number; neverSent: boolean; retryable: boolean };

export type RetryStep =
  /** a 2xx: parse it */
  | { action: "done"; state: RetryState }
  /** the key itself is refused: this call fails, and every later one */
  | { action: "key-refused"; state: RetryState }
  /** a 429: pause every caller for delayMs, then try again */
  | { action: "pause"; delayMs: number; waitFor: WaitFor; state: RetryState }
  /** a 429 asking to wait longer than the call has left: fail with how long and why */
  | { action: "wait-too-long"; delayMs: number; leftMs: number; waitFor: WaitFor; state: RetryState }
  /** a POST that may have been applied: never repeated */
  | { action: "outcome-unknown"; state: RetryState }
  /** wait delayMs, then try again */
  | { action: "retry"; delayMs: number; state: RetryState }
  /**
   * fail with this attempt's error; `checkBaseUrl`: a GET's 404 before anything succeeded may mean a wrong base URL;
   * `unreachable`: the service was never reached, so later calls need not try
   */
  | { action: "fail"; checkBaseUrl: boolean; unreachable: boolean; state: RetryState };

/** Where a 429's wait came from, in the words of the error that gives up on it. */
export type WaitFor = "Retry-After" | "its RateLimit reset" | "backoff";

/** 401, or a 403 before any request of the client succeeded (`answered`): the key itself is refused. */
export function refusesKey(status: number, answered: boolean): boolean {
  return status === 401 || (status === 403 && !answered);
}

/**
 * The next step of a call after one attempt. `answered`: whether any request of the client got a 2xx answer yet;
 * `random` draws the backoff's jitter. The returned state is the call's spending after this attempt, before the next.
 */
export function nextStep(
  got: AttemptOutcome,
  before: RetryState,
  policy: RetryPolicy,
  answered: boolean,
  random: () => number = Math.random,
): RetryStep {
  const failed = got.kind === "failure" || (got.status !== 429 && (got.status < 200 || got.status >= 300));
  const state: RetryState = {
    attempt: before.attempt,
    failures: before.failures + (failed ? 1 : 0),
    // the first exchange is the call, not a retry; waiting in the client's own queue is never counted
    retryTimeMs: before.retryTimeMs + (before.attempt > 1 ? got.ms : 0),
  };
  const backoff = (): number => backoffDelay(before.attempt, policy.retryBaseMs, policy.retryMaxDelayMs, random);
  const retryAfter = (delayMs: number): RetryStep | undefined =>
    state.failures >= policy.maxAttempts || state.retryTimeMs + delayMs > policy.maxRetryTimeMs
      ? undefined
      : { action: "retry", delayMs, state: { ...state, retryTimeMs: state.retryTimeMs + delayMs } };

  if (got.kind === "response") {
    const { status } = got;
    if (status >= 200 && status < 300) return { action: "done", state };
    if (refusesKey(status, answered)) return { action: "key-refused", state };
    if (status === 429) {
      const delayMs = got.retryAfterMs || got.quotaResetMs || Math.max(1000, backoff());
      const waitFor: WaitFor = got.retryAfterMs ? "Retry-After" : got.quotaResetMs ? "its RateLimit reset" : "backoff";
      const leftMs = policy.maxRetryTimeMs - state.retryTimeMs;
      if (delayMs > leftMs) return { action: "wait-too-long", delayMs, leftMs, waitFor, state };
      return { action: "pause", delayMs, waitFor, state: { ...state, retryTimeMs: state.retryTimeMs + delayMs } };
    }
    if (got.method === "POST" && POST_OUTCOME_UNKNOWN_STATUS.has(status)) return { action: "outcome-unknown", state };
    if (got.method === "GET" && RETRYABLE_STATUS.has(status)) {
      const retry = retryAfter(Math.min(got.retryAfterMs ?? backoff(), policy.retryMaxDelayMs));
      if (retry) return retry;
    }
    return {
      action: "fail",
      checkBaseUrl: status === 404 && got.method === "GET" && !answered,
      unreachable: false,
      state,
    };
  }
  if (got.method === "POST" && !got.neverSent) return { action: "outcome-unknown", state };
  if (got.retryable) {
    const retry = retryAfter(backoff());
    if (retry) return retry;
  }
  return { action: "fail", checkBaseUrl: false, unreachable: got.neverSent && got.retryable && !answered, state };
}

/** An attempt's result as the retry policy reads it. */
export function outcomeOf(
  method: "GET" | "POST",
  result: HttpResult & { ms: number; rate: RateLimitInfo },
): AttemptOutcome {
  if (result.kind === "failure")
    return { kind: "failure", method, ms: result.ms, neverSent: result.neverSent, retryable: result.retryable };
  const retryAfterMs = parseRetryAfter(result.headers["retry-after"], result.headers["date"]);
  const quotaResetMs = result.rate.remaining === 0 ? result.rate.resetMs : undefined;
  return {
    kind: "response",
    method,
    status: result.status,
    ms: result.ms,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(quotaResetMs === undefined ? {} : { quotaResetMs }),
  };
}
