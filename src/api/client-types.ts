/**
 * The API client's contract: the interface the engine, apply and the state plan against (the state answers through
 * it as the service would: src/state/README.md), its options and its events. The client itself is ./client.ts.
 */
import type { ServiceUnusableError } from "./errors.js";
import type { ListingLimits, Page } from "./pagination.js";
import type { RequestLimiter } from "./rate-limiter.js";
import type { CompleteStepBody, FormFieldValue, InstanceListItem, InstanceRecord, Workflow } from "./schemas.js";
import type { RequestStats } from "./stats.js";

export interface ClientOptions {
  /** e.g. "https://host/api" or "http://127.0.0.1:4010/api/" (trailing slash optional) */
  baseUrl: string;
  apiKey: string;
  /** where the key came from, in words for auth errors ("the API key in …"); the caller's words, default "the API key" */
  keySource?: string;
  /**
   * The service's limit in requests per window (a minute unless `rateLimitWindowMs` says otherwise); default 100,
   * 0 = no client-side limit. The client allows itself 95 % of it in any sliding window (rate-limiter.ts); a 429,
   * Retry-After and RateLimit headers are followed either way. Fractions are fine (a shard's share). The defaults of
   * this and the next options are the settings model's (src/model/settings.ts).
   */
  rateLimitPerMin?: number;
  /** the window of `rateLimitPerMin`; default 60_000 (tests and the benchmark scale it down with the sandbox's) */
  rateLimitWindowMs?: number;
  /** replaces the window limiter (the benchmark plugs in the old token bucket to compare) */
  limiter?: RequestLimiter;
  /**
   * No POST is sent after this instant (epoch ms; apply's --max-duration): a POST whose rate-limit slot would open
   * later fails at once with PastDeadlineNotSentError, sending nothing, instead of waiting for the window
   */
  notAfter?: number;
  /**
   * The run's stop (SIGTERM/SIGINT: src/cli/signals.ts): once aborted, no request starts — one waiting for a
   * rate-limit slot, a connection or a retry gives up at once with StoppedNotSentError, sending nothing — while the
   * requests already in flight finish and are answered as usual
   */
  signal?: AbortSignal;
  /** default 4; max requests in flight */
  concurrency?: number;
  /** per request (connect to last body byte); default 30_000 */
  timeoutMs?: number;
  /** allow http:// to a non-loopback host */
  insecureHttp?: boolean;
  /** default 5: failed attempts of one call (GETs, and POSTs that surely never reached the server); 429s do not count */
  maxAttempts?: number;
  /** the deadline of one call's retries (backoff, 429 waits, repeated exchanges); default 120_000. 429s are retried until it is spent */
  maxRetryTimeMs?: number;
  /** retries, rate-limit waits, requests — for logs; never contains the key */
  onEvent?: (e: ClientEvent) => void;
  /** base of the exponential backoff; default 500 (tests use a few ms) */
  retryBaseMs?: number;
  /** cap of one backoff delay; default 30_000 */
  retryMaxDelayMs?: number;
  /** a larger response body fails the exchange; default 64 MiB */
  maxResponseBytes?: number;
  /** what one listing may take before the server is called endless; default 20,000 pages and 1,000,000 items */
  listingLimits?: Partial<ListingLimits>;
}

export type ClientEvent =
  | { type: "retry"; method: string; path: string; attempt: number; reason: string; delayMs: number }
  /**
   * source "server": a 429 paused the whole client for delayMs. source "client": the limiter starts holding requests
   * back for delayMs (>= 1 s), because the window's budget is spent (reason "window") or the service's RateLimit
   * headers say nothing is left until their reset (reason "quota"); budget is the requests allowed per window.
   */
  | {
      type: "rate-limited";
      delayMs: number;
      source?: "server" | "client";
      reason?: "window" | "quota";
      budget?: number;
      windowMs?: number;
    }
  /** one HTTP exchange; status 0 = no answer (connection error, timeout) */
  | { type: "request"; method: string; path: string; status: number; ms: number };

export type InstanceListQuery = Record<string, string | number | boolean | null | undefined | Array<string | number>>;
/** `instance_ids` and other arrays are comma-joined, `status` repeated; `page` and `limit` are managed by the client */
export type FormFieldQuery = InstanceListQuery;

export interface ApiClient {
  /** normalised, no trailing slash */
  readonly baseUrl: string;
  /** GET /processes/ */
  listWorkflows(): Promise<Workflow[]>;
  /** GET /v2/processes/{id}/instances/ — cursor pages, page_size 500 unless the query sets one; follows `next` */
  instancePages(processId: number, query?: InstanceListQuery): AsyncGenerator<Page<InstanceListItem>>;
  /** instancePages, flattened */
  instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem>;
  /** GET /instances/{id}/ */
  getInstance(id: number, opts?: { injectValues?: boolean; stepsTimeFrame?: boolean }): Promise<InstanceRecord>;
  /** POST /instances/{id}/complete_step/ — never retried once it may have reached the server */
  completeStep(id: number, body: CompleteStepBody): Promise<InstanceRecord>;
  /** POST /instances/bulk/abort (no trailing slash). An empty list sends nothing. */
  bulkAbort(ids: number[]): Promise<{ ids: number[] }>;
  /** GET /processes/{p}/steps/{s}/actions/{a}/ — page/limit pages (limit 500 default), later pages fetched concurrently, yielded in order */
  formFieldPages(
    processId: number,
    stepId: number,
    actionId: number,
    query?: FormFieldQuery,
  ): AsyncGenerator<Page<FormFieldValue>>;
  /** a snapshot of the request counters */
  stats(): RequestStats;
  /** set once the service refused the key or could not be reached: every later call fails with it */
  unusable(): ServiceUnusableError | undefined;
  /** what the service's own clock (its `Date` headers) says of the answers so far; absent: nothing is known */
  serviceClock?(): ServiceClock | undefined;
  close(): Promise<void>;
}

/**
 * The service's clock as its answers tell it (the HTTP `Date` header, whole seconds, rounded down), for `--state`,
 * which bounds its next look by it rather than by ours (src/state/README.md). An answer shows the service's data as
 * of some instant no earlier than its Date less the exchange's duration by our clock (the service cannot have begun
 * before we sent); so `earliestMs` is a safe lower bound of when anything answered so far was read.
 */
export interface ServiceClock {
  /** the least (Date − duration of the exchange) over the dated 2xx answers; null before any */
  earliestMs: number | null;
  /** the greatest Date seen */
  latestMs: number | null;
  /** 2xx answers so far */
  answered: number;
  /** of those, the ones without a Date that parses (a proxy dropped it): the clock then cannot vouch for them */
  undated: number;
}
