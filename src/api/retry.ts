/** Retry timing: exponential backoff with full jitter, and Retry-After parsing. */
import { pauseUnless } from "../model/abortable.js";

/** Full jitter (AWS architecture blog): uniform in [0, min(cap, base·2^(attempt-1))]; spreads out herds of callers. */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * ceiling);
}

/**
 * Retry-After as milliseconds from now: delta-seconds, or an HTTP date. For a date, the response's own Date header
 * is the reference when present, so a skewed local clock does not matter. Undefined when absent or unparsable.
 */
export function parseRetryAfter(
  value: string | undefined,
  dateHeader: string | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  const serverNow = dateHeader !== undefined ? Date.parse(dateHeader) : Number.NaN;
  const reference = Number.isNaN(serverNow) ? now : serverNow;
  return Math.max(0, at - reference);
}

/** Gateway and overload answers worth another try (for requests that are safe to repeat). */
export const RETRYABLE_STATUS = new Set([502, 503, 504]);

/** Resolves after `ms`; with `stop`, at once when it aborts (the timer cleared, so a stopping run is not kept alive). */
export function sleep(ms: number, stop?: AbortSignal): Promise<void> {
  return pauseUnless(ms, stop);
}
