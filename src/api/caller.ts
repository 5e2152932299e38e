/**
 * The machinery under every endpoint of the API client (./client.ts): how one call is sent, retried and read.
 */
import { STATUS_CODES } from "node:http";
import pLimit, { type LimitFunction } from "p-limit";
import { VERSION } from "../model/version.js";
import {
  ApiError,
  ClientClosedError,
  OutcomeUnknownError,
  TransportError,
  PastDeadlineNotSentError,
  ServiceUnusableError,
  StoppedNotSentError,
  describeRequest,
  redact,
} from "./errors.js";
import { asked, errorDetail, noteDate, parseAnswer, type CallSpec } from "./answers.js";
import type { ClientEvent, ClientOptions, ServiceClock } from "./client-types.js";
import { HttpTransport, type HttpFailure, type HttpResponse, type HttpResult } from "./http.js";
import { parseRateLimitHeaders, type RateLimitInfo } from "./rate-headers.js";
import {
  DEFAULT_WINDOW_MS,
  LimiterStoppedError,
  PastDeadlineError,
  RateLimiter,
  type LimiterWait,
  type RequestLimiter,
} from "./rate-limiter.js";
import { sleep } from "./retry.js";
import { nextStep, outcomeOf, refusesKey, type RetryPolicy, type RetryState } from "./retry-policy.js";
import type { Workflow } from "./schemas.js";
import { StatsRecorder, type RequestStats } from "./stats.js";
import { describeLink, normaliseBaseUrl, type BaseUrl } from "./url-guard.js";
import { apiKeyProblem } from "./key-check.js";
import { plural } from "../text/plural.js";
import { DEFAULT_CONCURRENCY, DEFAULT_RATE_LIMIT, DEFAULT_TIMEOUT_MS } from "../model/settings.js";

export abstract class Caller {
  readonly baseUrl: string;
  protected readonly base: BaseUrl;
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
  private readonly policy: RetryPolicy;
  protected readonly concurrency: number;
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
    this.policy = {
      maxAttempts: Math.max(1, Math.floor(opts.maxAttempts ?? 5)),
      maxRetryTimeMs: Math.max(0, opts.maxRetryTimeMs ?? 120_000),
      retryBaseMs: Math.max(0, opts.retryBaseMs ?? 500),
      retryMaxDelayMs: Math.max(0, opts.retryMaxDelayMs ?? 30_000),
    };
    this.onEvent = opts.onEvent;
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

  stats(): RequestStats {
    return this.recorder.snapshot();
  }

  unusable(): ServiceUnusableError | undefined {
    return this.fatal;
  }

  serviceClock(): ServiceClock {
    return { ...this.clock };
  }

  /** Marks the client unusable (the first reason wins): every later call fails with this error, sending nothing. */
  private unusableBecause(message: string, cause: unknown): void {
    this.fatal ??= new ServiceUnusableError(this.clean(message), { cause });
  }

  /** GET /processes/: asked once after a listing's 404 to tell a wrong base URL from a missing workflow */
  abstract listWorkflows(): Promise<Workflow[]>;

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
    this.emit({
      type: "rate-limited",
      delayMs: w.delayMs,
      source: "client",
      reason: w.reason,
      ...budget,
      windowMs: w.windowMs,
    });
  }

  /** A POST whose outcome is unknown: counted, and described with the key masked out of the reason. */
  private outcomeUnknown(
    spec: CallSpec<unknown>,
    what: { reason: string; status?: number; cause?: unknown },
  ): OutcomeUnknownError {
    this.recorder.outcomeUnknown();
    return new OutcomeUnknownError({
      ...asked(spec),
      method: spec.method,
      path: spec.path,
      body: spec.body,
      ...what,
      reason: this.clean(what.reason),
    });
  }

  private clean(text: string): string {
    return redact(text, this.apiKey);
  }

  /** One attempt: a rate-limiter slot and a concurrency slot, then the exchange. */
  private attempt(
    spec: CallSpec<unknown>,
    bodyText: string | undefined,
  ): Promise<HttpResult & { ms: number; rate: RateLimitInfo }> {
    return this.limit(async () => {
      if (this.closed) throw new ClientClosedError();
      // a 429 asked every caller to wait longer than any call may spend retrying ("quota exhausted, come back
      // tomorrow"): refuse at once instead of holding every caller for that long; nothing is sent
      const paused = this.limiter.pausedFor();
      const held = Math.max(paused, this.limiter.quotaFor());
      if (held > this.policy.maxRetryTimeMs) {
        throw new ApiError({
          ...asked(spec),
          status: 429,
          method: spec.method,
          path: spec.path,
          detail: `not sent: the service asked to wait ${Math.ceil(held / 1000)} s (${held === paused ? "Retry-After" : "its RateLimit reset"}), longer than the retry budget of ${Math.ceil(this.policy.maxRetryTimeMs / 1000)} s`,
          attempts: 0,
        });
      }
      this.refuseWhenStopping(spec);
      const notAfter = spec.method === "POST" ? this.notAfter : undefined;
      const grant = await this.limiter.acquire(notAfter, this.stop).catch((err: unknown) => {
        if (err instanceof LimiterStoppedError) this.refuseWhenStopping(spec, true);
        if (!(err instanceof PastDeadlineError)) throw err;
        throw new PastDeadlineNotSentError(
          `${asked(spec).asked ?? spec.path}: not sent, its rate-limit slot opens only after the run's deadline`,
        );
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
      if (result.kind === "response" && status >= 200 && status < 300) noteDate(this.clock, result.headers["date"], ms);
      const rate = result.kind === "response" ? parseRateLimitHeaders(result.headers) : {};
      this.limiter.finished(grant.ticket, rate);
      return { ...result, ms, rate };
    });
  }

  /** Once the run is stopping, nothing more is sent: the call ends here with StoppedNotSentError. */
  private refuseWhenStopping(spec: CallSpec<unknown>, always = false): void {
    if (always || this.stop?.aborted)
      throw new StoppedNotSentError(
        `${asked(spec).asked ?? describeRequest(spec.method, spec.path)}: not sent, the run is stopping`,
      );
  }

  /** One call: attempts until the retry policy (./retry-policy.ts) says it is done, carrying out what it decides. */
  protected async call<T>(spec: CallSpec<T>): Promise<T> {
    if (this.closed) throw new ClientClosedError();
    this.refuseWhenStopping(spec);
    const bodyText = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    let state: RetryState = { attempt: 1, failures: 0, retryTimeMs: 0 };
    for (;;) {
      if (this.fatal) throw this.fatal;
      const attempt = state.attempt;
      if (attempt > 1) this.recorder.retried(spec.endpoint);
      const result = await this.attempt(spec, bodyText);
      const step = nextStep(outcomeOf(spec.method, result), state, this.policy, this.answered);
      state = { ...step.state, attempt: attempt + 1 };
      if (result.kind === "response") {
        const { status } = result;
        switch (step.action) {
          case "done":
            this.answered = true;
            return parseAnswer(spec, result, (text) => this.clean(text));
          case "key-refused": {
            // this call fails as any refused call does; every later one with the one-line error
            const err = this.apiError(spec, result, attempt);
            this.unusableBecause(
              `the service refused ${this.keySource}: ${status} ${STATUS_CODES[status] ?? ""}${err.detail ? ` (${err.detail})` : ""}`,
              err,
            );
            throw err;
          }
          case "pause":
          case "wait-too-long":
            // the pause holds back every caller of the client
            this.limiter.pause(step.delayMs);
            this.emit({ type: "rate-limited", delayMs: step.delayMs, source: "server" });
            if (step.action === "wait-too-long") {
              const said = this.clean(errorDetail(result.text));
              const why = `asked to wait ${Math.ceil(step.delayMs / 1000)} s (${step.waitFor}), longer than the ${Math.max(0, Math.floor(step.leftMs / 1000))} s left of its retry budget of ${Math.ceil(this.policy.maxRetryTimeMs / 1000)} s`;
              throw new ApiError({
                ...asked(spec),
                status,
                method: spec.method,
                path: spec.path,
                detail: said,
                note: why,
                attempts: attempt,
              });
            }
            this.emit({
              type: "retry",
              method: spec.method,
              path: spec.path,
              attempt: attempt + 1,
              reason: "429 Too Many Requests",
              delayMs: step.delayMs,
            });
            continue; // acquire() waits out the pause
          case "outcome-unknown":
            throw this.outcomeUnknown(spec, { status, reason: `answered ${status}: ${errorDetail(result.text)}` });
          case "retry":
            await this.retryAfter(spec, step.delayMs, attempt, `${status}`);
            continue;
          case "fail": {
            const err = this.apiError(spec, result, attempt);
            // this call fails with its own error, as a refused key's does; a wrong base URL fails every later one at once
            if (step.checkBaseUrl) await this.checkBaseUrl(spec, err);
            throw err;
          }
        }
      }
      const failure: HttpFailure = result;
      if (step.action === "outcome-unknown") {
        throw this.outcomeUnknown(spec, {
          reason:
            failure.status === undefined
              ? failure.reason
              : `${failure.reason} while reading a ${failure.status} answer`,
          ...(failure.status === undefined ? {} : { status: failure.status }),
          cause: failure.cause,
        });
      }
      if (step.action === "retry") {
        await this.retryAfter(spec, step.delayMs, attempt, this.clean(failure.reason));
        continue;
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
      if (step.action === "fail" && step.unreachable) {
        this.unusableBecause(
          `cannot reach the service at ${this.base.origin}: ${failure.reason} after ${plural(attempt, "attempt")}`,
          transportError,
        );
      }
      throw transportError;
    }
  }

  /** Says a retry is coming and waits for it; a run that stops meanwhile sends nothing more. */
  private async retryAfter(spec: CallSpec<unknown>, delayMs: number, attempt: number, reason: string): Promise<void> {
    this.emit({ type: "retry", method: spec.method, path: spec.path, attempt: attempt + 1, reason, delayMs });
    await sleep(delayMs, this.stop);
    this.refuseWhenStopping(spec);
  }

  /**
   * A 404 before any request succeeded: the workflow list answering 404 means the base URL is wrong (a path the
   * service does not serve, typically without /api), and the run stops once with that hint instead of failing every
   * rule with the same 404. A listing's 404 asks the workflow list once to tell that apart from a
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
    if (res.status >= 300 && res.status < 400 && res.headers["location"])
      detail ||= `redirect to ${describeLink(res.headers["location"])}`;
    // a refused key says where the key comes from
    const note = refusesKey(res.status, this.answered) ? { note: `check ${this.keySource}` } : {};
    return new ApiError({
      ...asked(spec),
      status: res.status,
      method: spec.method,
      path: spec.path,
      detail: this.clean(detail),
      attempts,
      ...note,
    });
  }
}
