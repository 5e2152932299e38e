/**
 * Delivers one notification document to each webhook: a JSON POST, each attempt cut off after a few seconds, a
 * failure (network, timeout, 429, 5xx) retried twice with backoff, then reported as a warning. Delivery never changes
 * the outcome of the run it reports on: nothing here throws.
 */
import type { Dispatcher } from "undici";
import { Pool, request } from "../api/undici-light.js";
import { VERSION } from "../model/version.js";
import { shownUrl } from "./urls.js";
import { plural } from "../text/plural.js";

export interface NotifyOptions {
  /** per attempt; default 5 s. All attempts together end within twice this (a hanging receiver costs 10 s at most). */
  timeoutMs?: number;
  /** attempts per URL; default 3 */
  attempts?: number;
  /** first backoff; doubled each retry; default 500 ms */
  backoffMs?: number;
}

export interface Delivery {
  /** the URL as shown in messages (no path, no query: they often hold the webhook's secret) */
  target: string;
  ok: boolean;
  attempts: number;
  /** the last problem, in words */
  problem?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function attempt(
  pool: Dispatcher,
  url: URL,
  body: string,
  timeoutMs: number,
): Promise<{ ok: boolean; retry: boolean; problem?: string }> {
  try {
    const res = await request(pool, {
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": `flowrules/${VERSION}` },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    // the answer is read and dropped: a receiver's page is of no interest, only its status
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, retry: false };
    const retry = res.statusCode === 429 || res.statusCode >= 500;
    return { ok: false, retry, problem: `answered ${res.statusCode}` };
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    const timedOut = e.name === "TimeoutError" || e.name === "AbortError" || /timeout/i.test(e.code ?? "");
    return {
      ok: false,
      retry: true,
      problem: timedOut
        ? `no answer within ${Math.round(timeoutMs / 100) / 10} s`
        : `could not be reached (${e.code ?? e.message ?? "error"})`,
    };
  }
}

export async function deliver(url: URL, payload: unknown, opts: NotifyOptions = {}): Promise<Delivery> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const attempts = Math.max(1, opts.attempts ?? 3);
  const backoff = opts.backoffMs ?? 500;
  const body = JSON.stringify(payload);
  let last: { ok: boolean; retry: boolean; problem?: string } = { ok: false, retry: false };
  const deadline = Date.now() + 2 * timeoutMs;
  let n = 0;
  // one connection to the receiver for all attempts, closed whatever happens
  const pool = new Pool(url.origin, { connections: 1 });
  try {
    while (n < attempts) {
      n++;
      last = await attempt(pool, url, body, Math.min(timeoutMs, deadline - Date.now()));
      if (last.ok || !last.retry) break;
      const wait = backoff * 2 ** (n - 1);
      if (n >= attempts || Date.now() + wait + 100 >= deadline) break;
      await sleep(wait);
    }
  } finally {
    await pool.destroy().catch(() => undefined);
  }
  return { target: shownUrl(url), ok: last.ok, attempts: n, ...(last.problem ? { problem: last.problem } : {}) };
}

/** One POST per URL, all at once; the deliveries in the order of `urls`. */
export function notifyAll(urls: readonly URL[], payload: unknown, opts: NotifyOptions = {}): Promise<Delivery[]> {
  return Promise.all(urls.map((u) => deliver(u, payload, opts)));
}

/** The warning line for a failed delivery. */
export function deliveryWarning(d: Delivery): string {
  return `flowrules: warning: notification to ${d.target} failed after ${plural(d.attempts, "attempt")}: ${d.problem ?? "unknown problem"}; the run's result is unchanged`;
}
