/**
 * The one way to make a client from resolved connection settings (src/model/settings.ts). Flags, environment and
 * profiles are read in src/cli/settings.ts; this layer takes plain values only.
 */
import { createClient, type ApiClient, type ClientEvent, type ClientOptions } from "./client.js";
import { DEFAULT_WINDOW_MS, RateLimiter } from "./rate-limiter.js";
import type { ConnectionSettings } from "../model/settings.js";

/**
 * Resolved connection settings, and what a run adds to them: a sink seeing every event of every client (a
 * watcher's metrics), and the run's stop signal, which every client made from them honours (ClientOptions.signal).
 */
export type ClientSettings = ConnectionSettings & { observe?: (e: ClientEvent) => void; stop?: AbortSignal };

/** The client for these settings; `extra` adds an event sink (the logger), a shared limiter or retry timing. */
export function clientFrom(settings: ClientSettings, extra: Partial<ClientOptions> = {}): ApiClient {
  return createClient({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    ...(settings.keySource === undefined ? {} : { keySource: settings.keySource }),
    rateLimitPerMin: settings.rateLimitPerMin,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    insecureHttp: settings.insecureHttp,
    ...(settings.stop ? { signal: settings.stop } : {}),
    ...extra,
    ...(settings.observe ? { onEvent: both(settings.observe, extra.onEvent) } : {}),
  });
}

function both(a: (e: ClientEvent) => void, b: ((e: ClientEvent) => void) | undefined): (e: ClientEvent) => void {
  return (e) => {
    a(e);
    b?.(e);
  };
}

/**
 * One budget for everything this process sends with the key (plan then apply, retries, a watcher's cycles): pass it
 * as `limiter` to every client made for these settings. `windowMs` only for tests and benchmarks that scale time.
 */
export function sharedLimiter(settings: ClientSettings, windowMs: number = DEFAULT_WINDOW_MS): RateLimiter {
  return new RateLimiter({ perWindow: Math.max(0, settings.rateLimitPerMin), windowMs });
}
