/**
 * What a response says about the service's rate limit, from any of the header styles in use:
 *
 * - `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (IETF httpapi draft, early versions; reset in seconds
 *   from now) and `RateLimit-Policy: 100;w=60` (the quota and its window);
 * - `RateLimit: limit=100, remaining=5, reset=30` (draft 07) and `RateLimit: "default";r=5;t=30` with
 *   `RateLimit-Policy: "default";q=100;w=60` (later drafts);
 * - `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (the de-facto form; reset is seconds from now,
 *   or a Unix time in seconds when it is that large, as GitHub sends it).
 *
 * Several policies in one field (comma-separated) are read as the most restrictive one. Anything unreadable is ignored:
 * these headers only ever make the client more careful, never less.
 */

export interface RateLimitInfo {
  /** requests the service allows per its window */
  limit?: number;
  /** the service's window in milliseconds, when a policy states it */
  windowMs?: number;
  /** requests left before the window resets */
  remaining?: number;
  /** milliseconds from now until the window resets (or quota is restored) */
  resetMs?: number;
}

type Headers = Record<string, string | undefined>;

/** A Unix time in seconds is this large; a delta in seconds never is. */
const EPOCH_SECONDS = 1_000_000_000;

function num(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^\s*"?(\d+(?:\.\d+)?)"?\s*$/.exec(text);
  return m ? Number(m[1]) : undefined;
}

const minOf = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/** Splits a list field on commas outside quotes. */
function items(field: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (const ch of field) {
    if (ch === '"') quoted = !quoted;
    if (ch === "," && !quoted) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim() !== "") out.push(cur.trim());
  return out;
}

/** `key=value` parameters of one item (`;`-separated), lower-cased keys, quotes dropped. */
function params(item: string): { head: string; p: Map<string, string> } {
  const [head = "", ...rest] = item.split(";");
  const p = new Map<string, string>();
  for (const part of rest) {
    const eq = part.indexOf("=");
    if (eq > 0)
      p.set(
        part.slice(0, eq).trim().toLowerCase(),
        part
          .slice(eq + 1)
          .trim()
          .replace(/^"|"$/g, ""),
      );
  }
  return { head: head.trim(), p };
}

/** `100`, `100;w=60`, `10, 100;w=60` (a limit with its policies), `"default";q=100;w=60`. Most restrictive per minute. */
function readPolicy(field: string | undefined): Pick<RateLimitInfo, "limit" | "windowMs"> {
  if (field === undefined) return {};
  let best: { limit: number; windowMs?: number; perMs: number } | undefined;
  for (const item of items(field)) {
    const { head, p } = params(item);
    const limit = num(p.get("q")) ?? num(head);
    if (limit === undefined) continue;
    const w = num(p.get("w"));
    const windowMs = w === undefined ? undefined : w * 1000;
    // without a stated window, compare as if per minute: the production limit is stated per minute
    const perMs = limit / (windowMs ?? 60_000);
    if (!best || perMs < best.perMs) best = { limit, perMs, ...(windowMs === undefined ? {} : { windowMs }) };
  }
  if (!best) return {};
  return { limit: best.limit, ...(best.windowMs === undefined ? {} : { windowMs: best.windowMs }) };
}

/** Reset as milliseconds from now: delta seconds, or Unix seconds read against the response's Date (else ours). */
function resetFrom(text: string | undefined, dateHeader: string | undefined, now: number): number | undefined {
  const n = num(text);
  if (n === undefined) return undefined;
  if (n < EPOCH_SECONDS) return Math.round(n * 1000);
  const serverNow = dateHeader !== undefined ? Date.parse(dateHeader) : Number.NaN;
  return Math.max(0, Math.round(n * 1000 - (Number.isNaN(serverNow) ? now : serverNow)));
}

/** Reads the rate-limit headers of one response (names lower-case, as HttpTransport gives them). Empty when none. */
export function parseRateLimitHeaders(h: Headers, now: number = Date.now()): RateLimitInfo {
  let info: RateLimitInfo = {};
  const merge = (more: RateLimitInfo): void => {
    const limit = minOf(info.limit, more.limit);
    const remaining = minOf(info.remaining, more.remaining);
    // when two sources disagree, the later reset is the careful one
    const resetMs =
      info.resetMs === undefined
        ? more.resetMs
        : more.resetMs === undefined
          ? info.resetMs
          : Math.max(info.resetMs, more.resetMs);
    // the window goes with the limit it belongs to; a policy without a limit (or with the same one) may add it
    let windowMs = info.windowMs;
    if (more.limit !== undefined && info.limit !== undefined && more.limit < info.limit) windowMs = more.windowMs;
    else if (
      windowMs === undefined &&
      (more.limit === undefined || info.limit === undefined || more.limit === info.limit)
    )
      windowMs = more.windowMs;
    info = {
      ...(limit === undefined ? {} : { limit }),
      ...(windowMs === undefined ? {} : { windowMs }),
      ...(remaining === undefined ? {} : { remaining }),
      ...(resetMs === undefined ? {} : { resetMs }),
    };
  };

  for (const prefix of ["ratelimit-", "x-ratelimit-"]) {
    const limitField = h[`${prefix}limit`];
    const remaining =
      h[`${prefix}remaining`] === undefined
        ? undefined
        : items(h[`${prefix}remaining`] ?? "")
            .map((i) => num(params(i).head))
            .reduce(minOf, undefined);
    const resetMs = resetFrom(h[`${prefix}reset`], h["date"], now);
    merge({
      ...readPolicy(limitField),
      ...(remaining === undefined ? {} : { remaining }),
      ...(resetMs === undefined ? {} : { resetMs }),
    });
  }
  merge(readPolicy(h["ratelimit-policy"] ?? h["x-ratelimit-policy"]));

  const combined = h["ratelimit"];
  if (combined !== undefined) {
    // draft 07: one dictionary `limit=100, remaining=5, reset=30`
    const dict = new Map<string, string>();
    for (const item of items(combined)) {
      const eq = item.indexOf("=");
      if (eq > 0 && !item.includes(";")) dict.set(item.slice(0, eq).trim().toLowerCase(), item.slice(eq + 1).trim());
    }
    if (dict.size > 0) {
      const limit = num(dict.get("limit"));
      const remaining = num(dict.get("remaining"));
      const reset = num(dict.get("reset"));
      merge({
        ...(limit === undefined ? {} : { limit }),
        ...(remaining === undefined ? {} : { remaining }),
        ...(reset === undefined ? {} : { resetMs: Math.round(reset * 1000) }),
      });
    } else {
      // later drafts: `"policy";r=5;t=30` per policy
      for (const item of items(combined)) {
        const { p } = params(item);
        const remaining = num(p.get("r"));
        const reset = num(p.get("t"));
        merge({
          ...(remaining === undefined ? {} : { remaining }),
          ...(reset === undefined ? {} : { resetMs: Math.round(reset * 1000) }),
        });
      }
    }
  }
  return info;
}
