/**
 * The API client: the only way flowrules talks to the Workflow Instance Service. One method per endpoint of
 * docs/service.md, typed by the zod schemas; pagination as async generators; a shared rate limiter and concurrency limit;
 * retries that never repeat a POST that may have reached the server.
 */
import { STATUS_CODES } from "node:http";
import pLimit, { type LimitFunction } from "p-limit";
import type { z } from "zod";
import { VERSION } from "../model/version.js";
import {
  ApiError,
  ClientClosedError,
  OutcomeUnknownError,
  ResponseShapeError,
  TransportError,
  PastDeadlineNotSentError,
  ServiceUnusableError,
  StoppedNotSentError,
  describeRequest,
  UnsafeLinkError,
  WrongRecordError,
  redact,
} from "./errors.js";
import { HttpTransport, type HttpFailure, type HttpResponse, type HttpResult } from "./http.js";
import { cursorPages, DEFAULT_LISTING_LIMITS, numberedPages, type ListingLimits, type Page } from "./pagination.js";
import { pathId, withQuery } from "./query.js";
import { parseRateLimitHeaders, type RateLimitInfo } from "./rate-headers.js";
import { DEFAULT_WINDOW_MS, LimiterStoppedError, PastDeadlineError, RateLimiter, type LimiterWait, type RequestLimiter } from "./rate-limiter.js";
import { RETRYABLE_STATUS, backoffDelay, parseRetryAfter, sleep } from "./retry.js";
import {
  BulkAbortResponseSchema,
  FormFieldPageSchema,
  InstanceListPageSchema,
  InstanceRecordSchema,
  WorkflowListSchema,
  describeIssue,
  type CompleteStepBody,
  type FormFieldValue,
  type InstanceListItem,
  type InstanceRecord,
  type Workflow,
} from "./schemas.js";
import { StatsRecorder, type EndpointName, type RequestStats } from "./stats.js";
import { describeLink, linkPath, normaliseBaseUrl, relativeLink, type BaseUrl } from "./url-guard.js";
import { apiKeyProblem } from "./key-check.js";
import { errorMessage } from "../model/guards.js";
import { plural } from "../model/plural.js";
import { DEFAULT_CONCURRENCY, DEFAULT_RATE_LIMIT, DEFAULT_TIMEOUT_MS } from "../model/settings.js";

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
  | { type: "rate-limited"; delayMs: number; source?: "server" | "client"; reason?: "window" | "quota"; budget?: number; windowMs?: number }
  /** one HTTP exchange; status 0 = no answer (connection error, timeout) */
  | { type: "request"; method: string; path: string; status: number; ms: number };

export type InstanceListQuery = Record<string, string | number | boolean | null | undefined | Array<string | number>>;
/** `instance_ids` and other arrays are comma-joined, `status` repeated; `page` and `limit` are managed by the client */
export type FormFieldQuery = InstanceListQuery;

export type { Page } from "./pagination.js";

export type { EndpointName, EndpointStats, RequestStats } from "./stats.js";

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
  formFieldPages(processId: number, stepId: number, actionId: number, query?: FormFieldQuery): AsyncGenerator<Page<FormFieldValue>>;
  /** a snapshot of the request counters */
  stats(): RequestStats;
  /** set once the service refused the key or could not be reached: every later call fails with it (issue 28) */
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

/** Largest page the service serves (docs/service.md, "Limits"); also our default, since requests are the unit of cost. */
export const MAX_PAGE_SIZE = 500;

/** POST answers after which the change may or may not have been applied. */
const POST_OUTCOME_UNKNOWN_STATUS = new Set([500, 502, 503, 504]);

interface CallSpec<T> {
  endpoint: EndpointName;
  method: "GET" | "POST";
  /** relative to the base URL, with query */
  path: string;
  body?: unknown;
  schema: z.ZodType<T>;
  /** what the body should be, for shape errors: "the instance record" */
  what: string;
  /** what is asked, in words, for messages ("listing instances of workflow 1042, page 3"); default from the path */
  asked?: string;
}

function clampPageSize(value: unknown, name: string): number {
  if (value === undefined || value === null) return MAX_PAGE_SIZE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new TypeError(`${name} must be a positive integer, got ${String(value)}`);
  return Math.min(n, MAX_PAGE_SIZE);
}

function isJsonContentType(ct: string | undefined): boolean {
  return ct === undefined || /[/+]json\b/i.test(ct);
}

/** The service's `detail`, else a short excerpt of the body (tags stripped, whitespace collapsed). */
function errorDetail(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "detail" in parsed) {
      const d = (parsed as { detail: unknown }).detail;
      return typeof d === "string" ? d : JSON.stringify(d).slice(0, 300);
    }
    return JSON.stringify(parsed).slice(0, 300);
  } catch {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
    const plain = (title ?? text.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
    return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
  }
}

/** The words of a call for its errors, when it set them (else the error derives them from the path). */
function asked(spec: CallSpec<unknown>): { asked?: string } {
  return spec.asked === undefined ? {} : { asked: spec.asked };
}

class Client implements ApiClient {
  readonly baseUrl: string;
  private readonly base: BaseUrl;
  private readonly apiKey: string;
  /** "the API key in …": every refusal of the key names where it came from */
  private readonly keySource: string;
  private readonly http: HttpTransport;
  private readonly limiter: RequestLimiter;
  private readonly unsubscribe: (() => void) | undefined;
  /** end of the last limiter wait announced by an event, so four queued callers make one event, not four */
  private announcedUntil = 0;
  private readonly limit: LimitFunction;
  private readonly recorder = new StatsRecorder();
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly maxRetryTimeMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly concurrency: number;
  private readonly listingLimits: ListingLimits;
  private readonly onEvent: ((e: ClientEvent) => void) | undefined;
  private closed = false;
  private readonly notAfter: number | undefined;
  private readonly stop: AbortSignal | undefined;
  /** see ApiClient.unusable */
  private fatal: ServiceUnusableError | undefined;
  /** whether any request got a 2xx answer: a key that worked is not a wrong key */
  private answered = false;
  private readonly clock: ServiceClock = { earliestMs: null, latestMs: null, answered: 0, undated: 0 };
  /** the workflow list asked once after a listing's 404 before anything succeeded: is the base URL wrong? */
  private baseProbe: Promise<unknown> | undefined;

  constructor(opts: ClientOptions) {
    if (typeof opts.apiKey !== "string" || opts.apiKey.trim() === "") throw new TypeError("an API key is required");
    this.keySource = opts.keySource ?? "the API key";
    const keyProblem = apiKeyProblem(opts.apiKey, this.keySource);
    if (keyProblem) throw new TypeError(keyProblem);
    this.base = normaliseBaseUrl(opts.baseUrl, opts.insecureHttp ?? false);
    this.baseUrl = this.base.href;
    this.apiKey = opts.apiKey;
    this.notAfter = opts.notAfter;
    this.stop = opts.signal;
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? DEFAULT_CONCURRENCY));
    this.timeoutMs = Math.max(1, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.maxAttempts = Math.max(1, Math.floor(opts.maxAttempts ?? 5));
    this.maxRetryTimeMs = Math.max(0, opts.maxRetryTimeMs ?? 120_000);
    this.retryBaseMs = Math.max(0, opts.retryBaseMs ?? 500);
    this.retryMaxDelayMs = Math.max(0, opts.retryMaxDelayMs ?? 30_000);
    this.onEvent = opts.onEvent;
    this.listingLimits = { ...DEFAULT_LISTING_LIMITS, ...opts.listingLimits };
    this.limiter =
      opts.limiter ??
      new RateLimiter({
        perWindow: Math.max(0, opts.rateLimitPerMin ?? DEFAULT_RATE_LIMIT),
        windowMs: opts.rateLimitWindowMs ?? DEFAULT_WINDOW_MS,
        onWait: (w) => this.announceWait(w),
      });
    // a limiter shared with other clients of this process still tells this one's listeners when requests wait
    this.unsubscribe = opts.limiter?.subscribe?.((w) => this.announceWait(w));
    this.limit = pLimit(this.concurrency);
    this.http = new HttpTransport({
      origin: this.base.origin,
      connections: this.concurrency,
      timeoutMs: this.timeoutMs,
      ...(opts.maxResponseBytes === undefined ? {} : { maxResponseBytes: opts.maxResponseBytes }),
    });
    this.headers = {
      authorization: `Api-Key ${opts.apiKey}`,
      "user-agent": `flowrules/${VERSION} (node ${process.versions.node})`,
      accept: "application/json",
    };
  }

  // ---- endpoints -------------------------------------------------------------------------------------------------

  listWorkflows(): Promise<Workflow[]> {
    return this.call({ endpoint: "listWorkflows", method: "GET", path: "/processes/", schema: WorkflowListSchema, what: "the workflow list" });
  }

  instancePages(processId: number, query: InstanceListQuery = {}): AsyncGenerator<Page<InstanceListItem>> {
    const first = withQuery(`/v2/processes/${pathId("processId", processId)}/instances/`, {
      ...query,
      page_size: clampPageSize(query.page_size, "page_size"),
    });
    const words = (n: number): string => `listing instances of workflow ${processId}, page ${n}`;
    return cursorPages(
      first,
      (path, n) => this.call({ endpoint: "instancePages", method: "GET", path, schema: InstanceListPageSchema, what: "an instance list page", asked: words(n) }),
      (next, from, n) => {
        const rel = relativeLink(this.base, next, from);
        if (rel === null) {
          throw new UnsafeLinkError({ method: "GET", path: from, link: linkPath(next), basePath: this.base.basePath, asked: words(n) });
        }
        return rel;
      },
      words,
      this.listingLimits,
    );
  }

  async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }

  getInstance(id: number, opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {}): Promise<InstanceRecord> {
    const path = withQuery(`/instances/${pathId("id", id)}/`, {
      inject_values: opts.injectValues ? "true" : undefined,
      steps_time_frame: opts.stepsTimeFrame ? "true" : undefined,
    });
    return this.call({ endpoint: "getInstance", method: "GET", path, schema: InstanceRecordSchema, what: "the instance record" }).then((record) => {
      if (record.id !== id) throw new WrongRecordError(id, record.id);
      return record;
    });
  }

  completeStep(id: number, body: CompleteStepBody): Promise<InstanceRecord> {
    return this.call({
      endpoint: "completeStep",
      method: "POST",
      path: `/instances/${pathId("id", id)}/complete_step/`,
      body,
      schema: InstanceRecordSchema,
      what: "the instance record",
      asked: `${body.mode === "save" ? "saving" : "completing"} step ${body.step_id} of instance ${id}`,
    });
  }

  async bulkAbort(ids: number[]): Promise<{ ids: number[] }> {
    for (const id of ids) pathId("ids[]", id);
    if (ids.length === 0) return { ids: [] };
    return this.call({
      endpoint: "bulkAbort",
      method: "POST",
      path: "/instances/bulk/abort",
      body: { ids },
      schema: BulkAbortResponseSchema,
      what: "the bulk abort response",
      asked: `aborting ${plural(ids.length, "instance")}`,
    });
  }

  formFieldPages(processId: number, stepId: number, actionId: number, query: FormFieldQuery = {}): AsyncGenerator<Page<FormFieldValue>> {
    const path = `/processes/${pathId("processId", processId)}/steps/${pathId("stepId", stepId)}/actions/${pathId("actionId", actionId)}/`;
    const limit = clampPageSize(query.limit, "limit");
    const words = (n: number): string => `listing values of field ${actionId} (step ${stepId}, workflow ${processId}), page ${n}`;
    const fetchPage = async (page: number): Promise<Page<FormFieldValue> | "invalid-page"> => {
      try {
        return await this.call({
          endpoint: "formFieldPages",
          method: "GET",
          path: withQuery(path, { ...query, page, limit }),
          schema: FormFieldPageSchema,
          what: "a form-field page",
          asked: words(page),
        });
      } catch (err) {
        // only the service's own JSON "Invalid page." may mean "past the end" (numberedPages checks the count);
        // any other 404 — a gateway's HTML page — is an error
        if (page > 1 && err instanceof ApiError && err.status === 404 && err.detail === "Invalid page.") return "invalid-page";
        throw err;
      }
    };
    return numberedPages(fetchPage, this.concurrency, path, words, this.listingLimits);
  }

  stats(): RequestStats {
    return this.recorder.snapshot();
  }

  unusable(): ServiceUnusableError | undefined {
    return this.fatal;
  }

  serviceClock(): ServiceClock {
    return { ...this.clock };
  }

  /** A 2xx answer's Date header, for serviceClock(). */
  private noteDate(header: string | undefined, ms: number): void {
    const c = this.clock;
    c.answered += 1;
    const at = header === undefined ? Number.NaN : Date.parse(header);
    if (Number.isNaN(at)) {
      c.undated += 1;
      return;
    }
    const from = at - ms;
    if (c.earliestMs === null || from < c.earliestMs) c.earliestMs = from;
    if (c.latestMs === null || at > c.latestMs) c.latestMs = at;
  }

  /** Marks the client unusable (the first reason wins): every later call fails with this error, sending nothing. */
  private unusableBecause(message: string, cause: unknown): void {
    this.fatal ??= new ServiceUnusableError(this.clean(message), { cause });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    await this.http.close();
  }

  // ---- machinery -------------------------------------------------------------------------------------------------

  private emit(e: ClientEvent): void {
    if (!this.onEvent) return;
    try {
      this.onEvent(e);
    } catch {
      // a failing logger must not break requests
    }
  }

  private announceWait(w: LimiterWait): void {
    if (w.reason === "pause" || w.delayMs < 1000) return; // a 429's pause was announced when it came
    const until = Date.now() + w.delayMs;
    if (until <= this.announcedUntil + 1000) return;
    this.announcedUntil = until;
    const budget = Number.isFinite(w.budget) ? { budget: w.budget } : {};
    this.emit({ type: "rate-limited", delayMs: w.delayMs, source: "client", reason: w.reason, ...budget, windowMs: w.windowMs });
  }

  /** A POST whose outcome is unknown: counted, and described with the key masked out of the reason. */
  private outcomeUnknown(spec: CallSpec<unknown>, what: { reason: string; status?: number; cause?: unknown }): OutcomeUnknownError {
    this.recorder.outcomeUnknown();
    return new OutcomeUnknownError({ ...asked(spec), method: spec.method, path: spec.path, body: spec.body, ...what, reason: this.clean(what.reason) });
  }

  private clean(text: string): string {
    return redact(text, this.apiKey);
  }

  /** One attempt: a rate-limiter slot and a concurrency slot, then the exchange. */
  private attempt(spec: CallSpec<unknown>, bodyText: string | undefined): Promise<HttpResult & { ms: number; rate: RateLimitInfo }> {
    return this.limit(async () => {
      if (this.closed) throw new ClientClosedError();
      // a 429 asked every caller to wait longer than any call may spend retrying ("quota exhausted, come back
      // tomorrow"): refuse at once instead of holding every caller for that long; nothing is sent
      const paused = this.limiter.pausedFor();
      const held = Math.max(paused, this.limiter.quotaFor());
      if (held > this.maxRetryTimeMs) {
        throw new ApiError({
          ...asked(spec),
          status: 429,
          method: spec.method,
          path: spec.path,
          detail: `not sent: the service asked to wait ${Math.ceil(held / 1000)} s (${held === paused ? "Retry-After" : "its RateLimit reset"}), longer than the retry budget of ${Math.ceil(this.maxRetryTimeMs / 1000)} s`,
          attempts: 0,
        });
      }
      this.refuseWhenStopping(spec);
      const notAfter = spec.method === "POST" ? this.notAfter : undefined;
      const grant = await this.limiter.acquire(notAfter, this.stop).catch((err: unknown) => {
        if (err instanceof LimiterStoppedError) this.refuseWhenStopping(spec, true);
        if (!(err instanceof PastDeadlineError)) throw err;
        throw new PastDeadlineNotSentError(`${asked(spec).asked ?? spec.path}: not sent, its rate-limit slot opens only after the run's deadline`);
      });
      if (grant.waitedMs > 0) this.recorder.waited(grant.waitedMs);
      const headers = bodyText === undefined ? this.headers : { ...this.headers, "content-type": "application/json" };
      this.recorder.started();
      const t0 = Date.now();
      const result = await this.http.send({
        method: spec.method,
        path: this.base.basePath + spec.path,
        headers,
        body: bodyText,
        timeoutMs: this.timeoutMs,
      });
      const status = result.kind === "response" ? result.status : 0;
      this.recorder.finished(spec.endpoint, status);
      const ms = Date.now() - t0;
      this.emit({ type: "request", method: spec.method, path: spec.path, status, ms });
      if (result.kind === "response" && status >= 200 && status < 300) this.noteDate(result.headers["date"], ms);
      const rate = result.kind === "response" ? parseRateLimitHeaders(result.headers) : {};
      this.limiter.finished(grant.ticket, rate);
      return { ...result, ms, rate };
    });
  }

  /** Once the run is stopping, nothing more is sent: the call ends here with StoppedNotSentError. */
  private refuseWhenStopping(spec: CallSpec<unknown>, always = false): void {
    if (always || this.stop?.aborted) throw new StoppedNotSentError(`${asked(spec).asked ?? describeRequest(spec.method, spec.path)}: not sent, the run is stopping`);
  }

  private async call<T>(spec: CallSpec<T>): Promise<T> {
    if (this.closed) throw new ClientClosedError();
    this.refuseWhenStopping(spec);
    // Time spent retrying: backoff delays, 429 pauses and the repeated exchanges. Waiting in the client's own queue
    // does not count, or a call queued behind a long batch would lose its retries before it ever ran.
    let retryTimeMs = 0;
    // failed attempts other than 429s: a refusal is not a failure, it is retried for as long as the time budget lasts
    let failures = 0;
    const bodyText = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    for (let attempt = 1; ; attempt++) {
      if (this.fatal) throw this.fatal;
      if (attempt > 1) this.recorder.retried(spec.endpoint);
      const result = await this.attempt(spec, bodyText);
      if (attempt > 1) retryTimeMs += result.ms;
      if (result.kind === "failure" || (result.status !== 429 && (result.status < 200 || result.status >= 300))) failures += 1;

      // Can we afford another attempt after waiting delayMs? Bounded by failed attempts and by total time.
      const mayRetry = (delayMs: number, reason: string): boolean => {
        if (failures >= this.maxAttempts) return false;
        if (retryTimeMs + delayMs > this.maxRetryTimeMs) return false;
        retryTimeMs += delayMs;
        this.emit({ type: "retry", method: spec.method, path: spec.path, attempt: attempt + 1, reason, delayMs });
        return true;
      };
      const backoff = (): number => backoffDelay(attempt, this.retryBaseMs, this.retryMaxDelayMs);

      if (result.kind === "response") {
        const { status } = result;
        if (status >= 200 && status < 300) {
          this.answered = true;
          return this.parse(spec, result);
        }
        if (this.refusesKey(status)) {
          // this call fails as any refused call does; every later one with the one-line error
          const err = this.apiError(spec, result, attempt);
          this.unusableBecause(`the service refused ${this.keySource}: ${status} ${STATUS_CODES[status] ?? ""}${err.detail ? ` (${err.detail})` : ""}`, err);
          throw err;
        }
        const serverDelay = parseRetryAfter(result.headers["retry-after"], result.headers["date"]);
        if (status === 429) {
          // a refusal: nothing was applied, so POSTs retry too; the pause holds back every caller of the client.
          // The wait is the service's Retry-After, else its RateLimit reset when it says nothing is left, else backoff
          // (a zero is read as absent: retrying at once would only be refused again)
          const quotaReset = result.rate.remaining === 0 ? result.rate.resetMs : undefined;
          const delay = serverDelay || quotaReset || Math.max(1000, backoff());
          this.limiter.pause(delay);
          this.emit({ type: "rate-limited", delayMs: delay, source: "server" });
          const left = this.maxRetryTimeMs - retryTimeMs;
          if (delay > left) {
            const said = this.clean(errorDetail(result.text));
            const why = `asked to wait ${Math.ceil(delay / 1000)} s (${serverDelay ? "Retry-After" : quotaReset ? "its RateLimit reset" : "backoff"}), longer than the ${Math.max(0, Math.floor(left / 1000))} s left of its retry budget of ${Math.ceil(this.maxRetryTimeMs / 1000)} s`;
            throw new ApiError({ ...asked(spec), status, method: spec.method, path: spec.path, detail: said, note: why, attempts: attempt });
          }
          retryTimeMs += delay;
          this.emit({ type: "retry", method: spec.method, path: spec.path, attempt: attempt + 1, reason: "429 Too Many Requests", delayMs: delay });
          continue; // acquire() waits out the pause
        }
        if (spec.method === "POST" && POST_OUTCOME_UNKNOWN_STATUS.has(status)) {
          throw this.outcomeUnknown(spec, { status, reason: `answered ${status}: ${errorDetail(result.text)}` });
        }
        if (spec.method === "GET" && RETRYABLE_STATUS.has(status)) {
          const delay = Math.min(serverDelay ?? backoff(), this.retryMaxDelayMs);
          if (mayRetry(delay, `${status}`)) {
            await sleep(delay, this.stop);
            this.refuseWhenStopping(spec);
            continue;
          }
        }
        const err = this.apiError(spec, result, attempt);
        // this call fails with its own error, as a refused key's does; a wrong base URL fails every later one at once
        if (status === 404 && spec.method === "GET" && !this.answered) await this.checkBaseUrl(spec, err);
        throw err;
      }

      const failure: HttpFailure = result;
      if (spec.method === "POST" && !failure.neverSent) {
        throw this.outcomeUnknown(spec, {
          reason: failure.status === undefined ? failure.reason : `${failure.reason} while reading a ${failure.status} answer`,
          ...(failure.status === undefined ? {} : { status: failure.status }),
          cause: failure.cause,
        });
      }
      if (failure.retryable) {
        const delay = backoff();
        if (mayRetry(delay, this.clean(failure.reason))) {
          await sleep(delay, this.stop);
          this.refuseWhenStopping(spec);
          continue;
        }
      }
      const transportError = new TransportError({
        ...asked(spec),
        method: spec.method,
        path: spec.path,
        reason: this.clean(failure.reason),
        attempts: attempt,
        neverSent: failure.neverSent,
        cause: failure.cause,
      });
      if (failure.neverSent && failure.retryable && !this.answered) {
        this.unusableBecause(`cannot reach the service at ${this.base.origin}: ${failure.reason} after ${plural(attempt, "attempt")}`, transportError);
      }
      throw transportError;
    }
  }

  /**
   * A 404 before any request succeeded: the workflow list answering 404 means the base URL is wrong (a path the
   * service does not serve, typically without /api), and the run stops once with that hint instead of failing every
   * rule with the same 404 (issue 35). A listing's 404 asks the workflow list once to tell that apart from a
   * workflow that does not exist (a 404 of its own, docs/service.md).
   */
  private async checkBaseUrl(spec: CallSpec<unknown>, err: ApiError): Promise<void> {
    if (spec.endpoint === "listWorkflows") {
      const hint = /\/api$/.test(this.base.basePath) ? "is the base URL right?" : "is the base URL missing /api?";
      this.unusableBecause(`the service answered 404 for the workflow list at ${this.baseUrl}/ — ${hint}`, err);
      return;
    }
    if (spec.endpoint !== "instancePages" && spec.endpoint !== "formFieldPages") return;
    this.baseProbe ??= this.listWorkflows().catch(() => undefined);
    await this.baseProbe;
  }

  private apiError(spec: CallSpec<unknown>, res: HttpResponse, attempts: number): ApiError {
    let detail = errorDetail(res.text);
    if (res.status >= 300 && res.status < 400 && res.headers["location"]) detail ||= `redirect to ${describeLink(res.headers["location"])}`;
    // a refused key says where the key comes from (issue 28)
    const note = this.refusesKey(res.status) ? { note: `check ${this.keySource}` } : {};
    return new ApiError({ ...asked(spec), status: res.status, method: spec.method, path: spec.path, detail: this.clean(detail), attempts, ...note });
  }

  /** 401, or a 403 before any request succeeded: the key itself is refused (a 403 later is one workflow's permission). */
  private refusesKey(status: number): boolean {
    return status === 401 || (status === 403 && !this.answered);
  }

  private parse<T>(spec: CallSpec<T>, res: HttpResponse): T {
    const shapeError = (problem: string, jsonPath?: string): ResponseShapeError =>
      new ResponseShapeError({
        ...asked(spec),
        method: spec.method,
        path: spec.path,
        status: res.status,
        what: spec.what,
        problem: this.clean(problem),
        ...(jsonPath === undefined ? {} : { jsonPath }),
      });
    const ct = res.headers["content-type"];
    if (!isJsonContentType(ct)) {
      throw shapeError(`response is not JSON (content-type ${ct ?? "none"}): ${errorDetail(res.text)}`);
    }
    let data: unknown;
    try {
      data = JSON.parse(res.text);
    } catch (err) {
      throw shapeError(`response is not valid JSON (${errorMessage(err)})`);
    }
    // the text is not needed past here: a page of 500 (a large object once any name is not ASCII) must not live on
    // through the validation below, long enough to be promoted to the old generation
    res.text = "";
    const parsed = spec.schema.safeParse(data);
    if (!parsed.success) {
      const { jsonPath, problem } = describeIssue(parsed.error);
      throw shapeError(problem, jsonPath);
    }
    return parsed.data;
  }
}

/** Creates a client. Throws InsecureUrlError (plain http:// to a non-loopback host) before any request. */
export function createClient(opts: ClientOptions): ApiClient {
  return new Client(opts);
}
