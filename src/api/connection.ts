/**
 * Connection settings shared by every verb that talks to the service, read from flags and the environment, and the
 * one way to make a client from them. The API key comes only from the environment (FLOWRULES_API_KEY): flags end up
 * in shell history and CI logs.
 */
import { z } from "zod";
import { createClient, type ApiClient, type ClientOptions } from "./client.js";
import { InsecureUrlError } from "./errors.js";
import { isLoopbackHost } from "./url-guard.js";
import { apiKeyProblem } from "./key-check.js";
import { plainDecimal } from "./plain-decimal.js";
import { UserError } from "../model/errors.js";

/** The service's documented limit: about 100 requests a minute per key. */
export const DEFAULT_RATE_LIMIT = 100;

export interface ConnectionSettings {
  baseUrl: string;
  apiKey: string;
  /** the service's limit per minute as this process should see it (a shard's share; may be a fraction); 0 = off */
  rateLimitPerMin: number;
  concurrency: number;
  timeoutMs: number;
  insecureHttp: boolean;
}

const intText = (name: string, min: number) =>
  z
    .union([z.string(), z.number()])
    .transform((v, ctx) => {
      const n = typeof v === "number" ? v : plainDecimal(v);
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: "custom", message: `${name} must be a whole number ≥ ${min}, got ${JSON.stringify(v)}` });
        return z.NEVER;
      }
      return n;
    });

const RawConnection = z.object({
  baseUrl: z.string().optional(),
  rateLimit: intText("--rate-limit", 0).optional(),
  concurrency: intText("--concurrency", 1).optional(),
  timeout: intText("--timeout", 1).optional(),
  insecureHttp: z.boolean().optional(),
});

/**
 * Reads flags and environment into settings, or throws a UserError that says what to set. The rate budget is per API
 * key, and `--shard i/n` workers share one key: with no explicit `--rate-limit` / FLOWRULES_RATE_LIMIT each takes 1/n
 * of the default, so together they stay within it; an explicit limit is each worker's own (a key per worker).
 */
export function connectionSettings(
  opts: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  shard?: { index: number; count: number },
): ConnectionSettings {
  const parsed = RawConnection.safeParse({
    baseUrl: opts.baseUrl ?? env.FLOWRULES_BASE_URL,
    rateLimit: opts.rateLimit ?? (env.FLOWRULES_RATE_LIMIT || undefined),
    concurrency: opts.concurrency,
    timeout: opts.timeout,
    insecureHttp: opts.insecureHttp === true,
  });
  if (!parsed.success) throw new UserError(parsed.error.issues.map((i) => i.message).join("; "));
  const { baseUrl, rateLimit, concurrency, timeout, insecureHttp } = parsed.data;
  if (!baseUrl) throw new UserError("no service URL: pass --base-url or set FLOWRULES_BASE_URL (e.g. http://127.0.0.1:4010/api for `flowrules sandbox`)");
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol");
  } catch {
    throw new UserError(`--base-url / FLOWRULES_BASE_URL is not an http(s) URL: ${JSON.stringify(baseUrl)}`);
  }
  // refused here, before any rule or plan file is read and long before a socket could open (the client checks too)
  if (!insecureHttp && new URL(baseUrl).protocol === "http:" && !isLoopbackHost(new URL(baseUrl).hostname)) {
    throw new UserError(new InsecureUrlError(new URL(baseUrl).host).message);
  }
  const apiKey = env.FLOWRULES_API_KEY;
  if (!apiKey) throw new UserError("no API key: set FLOWRULES_API_KEY (it is never taken as a flag, so it stays out of shell history and CI logs)");
  const keyProblem = apiKeyProblem(apiKey);
  if (keyProblem) throw new UserError(keyProblem);
  return {
    baseUrl,
    apiKey,
    rateLimitPerMin: rateLimit ?? (shard ? DEFAULT_RATE_LIMIT / shard.count : DEFAULT_RATE_LIMIT),
    concurrency: concurrency ?? 4,
    timeoutMs: timeout ?? 30_000,
    insecureHttp: insecureHttp ?? false,
  };
}

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
