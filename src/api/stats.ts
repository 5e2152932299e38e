/** Request counters by endpoint and outcome, read by the CLI summary and the benchmark. */

export const ENDPOINTS = [
  "listWorkflows",
  "instancePages",
  "getInstance",
  "completeStep",
  "bulkAbort",
  "formFieldPages",
] as const;
export type EndpointName = (typeof ENDPOINTS)[number];

export interface EndpointStats {
  /** HTTP requests answered 2xx */
  ok: number;
  /** HTTP requests that failed: status >= 300, or no answer (connection error, timeout) */
  failed: number;
  /** requests that were repeats of an earlier attempt of the same call */
  retries: number;
}

export interface RequestStats {
  /** HTTP requests sent (or attempted), all endpoints, retries included */
  total: number;
  byEndpoint: Record<EndpointName, EndpointStats>;
  /** answers by status code; "error" for no answer */
  byStatus: Record<string, number>;
  /** retries over all endpoints */
  retries: number;
  /** 429 answers received */
  rateLimited: number;
  /** total milliseconds callers waited in the client-side limiter (the window, the service's quota and 429 pauses) */
  rateLimitWaitMs: number;
  /** highest number of requests in flight at once */
  maxInFlight: number;
  /** POSTs that ended as OutcomeUnknownError */
  outcomeUnknown: number;
}

export class StatsRecorder {
  private readonly s: RequestStats;
  private inFlight = 0;

  constructor() {
    const byEndpoint = {} as Record<EndpointName, EndpointStats>;
    for (const e of ENDPOINTS) byEndpoint[e] = { ok: 0, failed: 0, retries: 0 };
    this.s = {
      total: 0,
      byEndpoint,
      byStatus: {},
      retries: 0,
      rateLimited: 0,
      rateLimitWaitMs: 0,
      maxInFlight: 0,
      outcomeUnknown: 0,
    };
  }

  started(): void {
    this.inFlight += 1;
    if (this.inFlight > this.s.maxInFlight) this.s.maxInFlight = this.inFlight;
  }

  /** One attempt finished; status 0 = no answer. */
  finished(endpoint: EndpointName, status: number): void {
    this.inFlight -= 1;
    this.s.total += 1;
    const e = this.s.byEndpoint[endpoint];
    if (status >= 200 && status < 300) e.ok += 1;
    else e.failed += 1;
    const key = status === 0 ? "error" : String(status);
    this.s.byStatus[key] = (this.s.byStatus[key] ?? 0) + 1;
    if (status === 429) this.s.rateLimited += 1;
  }

  retried(endpoint: EndpointName): void {
    this.s.byEndpoint[endpoint].retries += 1;
    this.s.retries += 1;
  }

  waited(ms: number): void {
    this.s.rateLimitWaitMs += ms;
  }

  outcomeUnknown(): void {
    this.s.outcomeUnknown += 1;
  }

  /** A copy: callers may keep it without seeing later changes. */
  snapshot(): RequestStats {
    return structuredClone(this.s);
  }
}
