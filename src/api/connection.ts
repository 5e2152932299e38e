/**
 * The one way to make a client from resolved connection settings (src/model/settings.ts). Flags, environment and
 * profiles are read in src/cli/settings.ts; this layer takes plain values only.
 */
import { createClient, type ApiClient, type ClientOptions } from "./client.js";
import type { ConnectionSettings } from "../model/settings.js";

export type { ConnectionSettings } from "../model/settings.js";
export { DEFAULT_RATE_LIMIT } from "../model/settings.js";

/** The client for these settings; `extra` adds an event sink (the logger) or test tuning. */
export function clientFrom(settings: ConnectionSettings, extra: Partial<ClientOptions> = {}): ApiClient {
  return createClient({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    rateLimitPerMin: settings.rateLimitPerMin,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    insecureHttp: settings.insecureHttp,
    ...extra,
  });
}
