/**
 * Client-side rate limiter shared by every caller of one client: a token bucket (rate per minute, small burst) plus a
 * global pause that a 429 sets, so one Retry-After holds back every caller, not just the one that was refused.
 * Waiters are served first-in first-out.
 */
import { sleep } from "./retry.js";

export interface RateLimiterOptions {
  /** requests a minute; 0 = no client-side limit (a pause from a 429 still applies) */
  perMinute: number;
  /** bucket size; defaults to a small burst: ~5 % of a minute's allowance, between 1 and 10 */
  burst?: number;
  now?: () => number;
}

export class RateLimiter {
  private readonly perMs: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private last: number;
  private pausedUntil = 0;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(opts: RateLimiterOptions) {
    this.now = opts.now ?? ((): number => Date.now()); // looked up per call, so a faked clock in tests is seen
    this.perMs = Math.max(0, opts.perMinute) / 60_000;
    this.burst = opts.burst ?? Math.min(10, Math.max(1, Math.round(opts.perMinute / 20)));
    this.tokens = this.burst;
    this.last = this.now();
  }

  /** Waits for a slot; resolves with the milliseconds waited. */
  acquire(): Promise<number> {
    const turn = this.tail.then(() => this.take());
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  /** Holds back every caller for `ms` (a 429's Retry-After). Drains the bucket so no burst follows the pause. */
  pause(ms: number): void {
    const until = this.now() + ms;
    if (until > this.pausedUntil) this.pausedUntil = until;
    this.tokens = 0;
    this.last = Math.max(this.last, this.pausedUntil);
  }

  /** Milliseconds left in a pause set by pause(), 0 when none. */
  pausedFor(): number {
    return Math.max(0, this.pausedUntil - this.now());
  }

  private async take(): Promise<number> {
    const start = this.now();
    for (;;) {
      const t = this.now();
      if (t < this.pausedUntil) {
        await sleep(this.pausedUntil - t);
        continue;
      }
      if (this.perMs === 0) return this.now() - start;
      this.tokens = Math.min(this.burst, this.tokens + Math.max(0, t - this.last) * this.perMs);
      this.last = Math.max(this.last, t);
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return this.now() - start;
      }
      await sleep(Math.ceil((1 - this.tokens) / this.perMs));
    }
  }
}
