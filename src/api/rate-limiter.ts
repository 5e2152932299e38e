/**
 * Client-side rate limiter shared by every caller of one client: at most `budget` requests in any sliding window
 * (60 s by default), so a small run goes at once and a large one runs at the window's own pace, never over it. On
 * top of that, what the service says wins: a 429's Retry-After holds back every caller (a global pause), and
 * `RateLimit-*` / `X-RateLimit-*` headers can shrink the budget or hold requests until the service's window resets.
 * Waiters are served first-in first-out.
 *
 * A request counts in the window from the moment its answer came back (from when it was sent while it is in
 * flight). The service counts it when it arrives, which is between the two, so the client's window never holds fewer
 * requests than the service's: alone on its key, the client does not meet a 429, however latency varies. The budget
 * is still a little under the service's limit (WINDOW_SHARE) for other callers on the same key (a person's
 * `explain`, a second process) and for services that count a little differently. See src/api/README.md.
 *
 * It also stops: a caller's `stop` signal, once aborted, makes its waiting acquire() give up at once (its timer
 * cancelled, LimiterStoppedError) and refuses new ones, so a run told to stop never waits out a window (up to a
 * minute) for a request it will not send (docs/watch.md, "Signals": exit within 10 s).
 */
import type { RateLimitInfo } from "./rate-headers.js";
import { sleep as stoppableSleep } from "./retry.js";
import { whenAborted } from "../model/abortable.js";
import { WindowStamps } from "./window-stamps.js";

import { WINDOW_SHARE } from "../model/settings.js";

/** Share of the service's per-window limit the client allows itself: 95 of 100, leaving 5 for the above. */
export { WINDOW_SHARE };
/** The production limit is stated per minute. */
export const DEFAULT_WINDOW_MS = 60_000;
/** Longest single sleep: the clock is looked at again after it, so a clock that jumps (tests) is followed. */
const MAX_SLEEP_MS = 1_000;

export type WaitReason = "window" | "quota" | "pause";

export interface LimiterWait {
  /** planned milliseconds until the request may go */
  delayMs: number;
  /** window: our own budget is spent; quota: the service's headers say none left until reset; pause: a 429's Retry-After */
  reason: WaitReason;
  /** requests allowed per window right now */
  budget: number;
  windowMs: number;
}

export interface Grant {
  /** milliseconds this request waited for its slot */
  waitedMs: number;
  /** sequence number of the request, to tie an answer's rate-limit headers to what was sent after it */
  ticket: number;
}

/** What the API client needs of a limiter (the benchmark plugs in the old token bucket for comparison). */
/** Thrown by acquire(notAfter) when the next slot opens only after `notAfter`: nothing is sent, nobody waits for it. */
export class PastDeadlineError extends Error {
  constructor(readonly slotAt: number) {
    super("the next request slot opens after the run's deadline");
    this.name = "PastDeadlineError";
  }
}

/** Thrown by acquire(…, stop) once `stop` is aborted: the request waited for nothing and is not sent. */
export class LimiterStoppedError extends Error {
  constructor() {
    super("stopping: the request gave up its place in the rate-limit queue");
    this.name = "LimiterStoppedError";
  }
}

export interface RequestLimiter {
  /**
   * A slot for one request; with `notAfter`, refused at once (PastDeadlineError) when it would open only later; with
   * `stop`, given up at once (LimiterStoppedError) when it is aborted, waiting or not.
   */
  acquire(notAfter?: number, stop?: AbortSignal): Promise<Grant>;
  /** holds back every caller for `ms` (a 429's Retry-After) */
  pause(ms: number): void;
  /** milliseconds left in a pause set by pause(), 0 when none */
  pausedFor(): number;
  /** milliseconds until the service's quota resets when its RateLimit headers said none is left, 0 otherwise */
  quotaFor(): number;
  /** the exchange of request `ticket` is over (answered or failed); `info` from its answer's rate-limit headers */
  finished(ticket: number, info: RateLimitInfo): void;
  /**
   * A limiter shared by several clients (one process, one key, one budget: plan then apply, a watcher's cycles)
   * tells each of them when a request starts to wait; returns the unsubscribe.
   */
  subscribe?(onWait: (w: LimiterWait) => void): () => void;
}

export interface RateLimiterOptions {
  /** the service's limit: requests per window (fractions allowed: a shard's share); 0 = no client-side window */
  perWindow: number;
  /** default 60 s */
  windowMs?: number;
  /** default WINDOW_SHARE */
  share?: number;
  now?: () => number;
  /** resolves after `ms`, or at once when `stop` aborts (the timer cleared) */
  sleep?: (ms: number, stop?: AbortSignal) => Promise<void>;
  /** called when a request starts to wait (once per wait of the request at the head of the queue) */
  onWait?: (w: LimiterWait) => void;
}

/** Requests per window the client allows itself for a service limit of `perWindow`: at least 1, Infinity when off. */
export function windowBudget(perWindow: number, share: number = WINDOW_SHARE): number {
  if (!(perWindow > 0)) return Number.POSITIVE_INFINITY;
  return Math.max(1, Math.floor(perWindow * share + 1e-9));
}

export class RateLimiter implements RequestLimiter {
  private readonly windowMs: number;
  private readonly share: number;
  private readonly configured: number;
  /** the budget the service's own Limit header allows, when it sent one */
  private serverBudget = Number.POSITIVE_INFINITY;
  private readonly now: () => number;
  private readonly sleep: (ms: number, stop?: AbortSignal) => Promise<void>;
  private readonly onWait: ((w: LimiterWait) => void) | undefined;
  /** the requests in the current window by ticket: when sent, then when their answer came back */
  private readonly stamps = new WindowStamps();
  private granted = 0;
  private pausedUntil = 0;
  /** the service's count: `remaining` more requests until `resetAt`, as of the answer to request `ticket` */
  private quota: { remaining: number; resetAt: number; ticket: number } | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(w: LimiterWait) => void>();

  constructor(opts: RateLimiterOptions) {
    this.now = opts.now ?? ((): number => Date.now()); // looked up per call, so a faked Date in tests is seen
    this.sleep = opts.sleep ?? stoppableSleep;
    this.onWait = opts.onWait;
    this.share = opts.share ?? WINDOW_SHARE;
    const windowMs = Math.max(1, opts.windowMs ?? DEFAULT_WINDOW_MS);
    const allowed = opts.perWindow * this.share;
    // less than one request a window (a small limit split between many shards): one request per longer window
    this.windowMs = allowed > 0 && allowed < 1 ? Math.ceil(windowMs / allowed) : windowMs;
    this.configured = windowBudget(opts.perWindow, this.share);
  }

  subscribe(onWait: (w: LimiterWait) => void): () => void {
    this.listeners.add(onWait);
    return () => void this.listeners.delete(onWait);
  }

  /** Requests allowed in any window right now (Infinity when the client-side limit is off and the service said nothing). */
  get budget(): number {
    return Math.min(this.configured, this.serverBudget);
  }

  /** Requests sent in the window that ends now. */
  inWindow(): number {
    this.expire(this.now());
    return this.stamps.size;
  }

  acquire(notAfter?: number, stop?: AbortSignal): Promise<Grant> {
    if (stop?.aborted) return Promise.reject(new LimiterStoppedError());
    const turn = this.tail.then(() => this.take(notAfter, stop));
    this.tail = turn.catch(() => undefined);
    if (!stop) return turn;
    // a caller queued behind others gives up at once too; when its turn comes, take() returns at its first look
    return new Promise<Grant>((resolve, reject) => {
      const off = whenAborted(stop, () => reject(new LimiterStoppedError()));
      turn.then(
        (g) => {
          off();
          if (!stop.aborted) return resolve(g);
          // granted in the same instant as the stop: handed back unused
          this.finished(g.ticket, {});
          reject(new LimiterStoppedError());
        },
        (err: unknown) => {
          off();
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  pause(ms: number): void {
    const until = this.now() + Math.max(0, ms);
    if (until > this.pausedUntil) this.pausedUntil = until;
  }

  pausedFor(): number {
    return Math.max(0, this.pausedUntil - this.now());
  }

  quotaFor(): number {
    return this.quota && this.quota.remaining <= 0 ? Math.max(0, this.quota.resetAt - this.now()) : 0;
  }

  finished(ticket: number, info: RateLimitInfo): void {
    // counted again from now: whenever it reached the service, it was no later than this
    if (ticket > 0 && ticket <= this.granted) this.stamps.restamp(ticket, this.now());
    if (info.limit !== undefined && info.limit > 0) {
      // a limit per a longer window is spread over ours; per a shorter one it is kept whole (never more than it in ours)
      const perOurs =
        info.windowMs !== undefined && info.windowMs > this.windowMs
          ? (info.limit * this.windowMs) / info.windowMs
          : info.limit;
      this.serverBudget = windowBudget(perOurs, this.share);
    }
    if (info.remaining !== undefined && info.resetMs !== undefined) {
      // answers can arrive out of order: only a newer one replaces what we know
      if (this.quota && ticket < this.quota.ticket) return;
      // requests sent after this one may have been counted already, or will be: spend them from what is left
      const since = this.granted - ticket;
      this.quota = { remaining: info.remaining - since, resetAt: this.now() + info.resetMs, ticket };
    }
  }

  private expire(t: number): void {
    // every stamp is (re)stamped at the time it holds, so they are in time order: stop at the first one still in
    this.stamps.expire(t - this.windowMs);
  }

  /** The earliest instant a request may go, and what holds it back. */
  private nextSlot(t: number): { at: number; reason: WaitReason } {
    let at = t;
    let reason: WaitReason = "window";
    this.expire(t);
    const budget = this.budget;
    const count = this.stamps.size;
    if (count >= budget) {
      // the request that must leave the window before one more fits: count - budget + 1 have to go
      const times = this.stamps.values().sort((a, b) => a - b);
      at = (times[count - budget] ?? t) + this.windowMs;
    }
    if (this.quota) {
      if (t >= this.quota.resetAt) this.quota = undefined;
      else if (this.quota.remaining <= 0 && this.quota.resetAt > at) {
        at = this.quota.resetAt;
        reason = "quota";
      }
    }
    if (this.pausedUntil > at) {
      at = this.pausedUntil;
      reason = "pause";
    }
    return { at, reason };
  }

  private async take(notAfter?: number, stop?: AbortSignal): Promise<Grant> {
    const start = this.now();
    let announced = false;
    for (;;) {
      if (stop?.aborted) throw new LimiterStoppedError();
      const t = this.now();
      const { at, reason } = this.nextSlot(t);
      if (notAfter !== undefined && at > notAfter) throw new PastDeadlineError(at);
      if (at <= t) {
        this.granted += 1;
        this.stamps.add(this.granted, t); // kept even with no budget: a Limit header may bring one
        if (this.quota) this.quota.remaining -= 1;
        return { waitedMs: announced ? Math.max(0, this.now() - start) : 0, ticket: this.granted };
      }
      if (!announced) {
        announced = true;
        const w = { delayMs: at - t, reason, budget: this.budget, windowMs: this.windowMs };
        this.onWait?.(w);
        for (const l of this.listeners) l(w);
      }
      await this.sleep(Math.min(at - t, MAX_SLEEP_MS), stop);
    }
  }
}
