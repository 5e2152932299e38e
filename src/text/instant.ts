/**
 * The instants a user types for a forecast (`plan --at`, `forecast --until`; docs/forecast.md): an ISO 8601 instant
 * with a zone, or `+DURATION` from now in the one duration grammar (./duration.ts), and how views write them back.
 */
import { readDuration } from "./duration.js";

export type InstantResult = { ok: true; at: Date } | { ok: false; problem: string };

/** "+7d", "+36h" (from `now`, up to the whole minute unless `exact`: a horizon counted in steps from now) or "2026-12-05T09:00Z" → the instant; anything else is a problem in words. */
export function readInstant(raw: string, now: Date, opts: { exact?: boolean } = {}): InstantResult {
  const text = raw.trim();
  if (text.startsWith("+")) {
    const d = readDuration(text.slice(1), { timer: false });
    if (!d.ok) return { ok: false, problem: d.problem.replace(/got "/, 'got "+') };
    // up to the whole minute, so views name the instant as people write it (2026-12-05T09:01Z)
    const at = now.getTime() + d.ms;
    return { ok: true, at: new Date(opts.exact === true ? at : Math.ceil(at / 60_000) * 60_000) };
  }
  // a zone is required: an instant without one would mean another moment on every runner's clock
  if (
    !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text) &&
    !/^\d{4}-\d{2}-\d{2}$/.test(text)
  ) {
    return {
      ok: false,
      problem: `must be an ISO 8601 instant with its zone (2026-12-05T09:00Z) or +DURATION (+7d, +36h); got ${JSON.stringify(raw)}`,
    };
  }
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(ms)) return { ok: false, problem: `is not a valid instant: ${JSON.stringify(raw)}` };
  return { ok: true, at: new Date(ms) };
}

/** An instant as views write it: UTC, without the zero seconds and milliseconds (`2026-12-05T09:00Z`). */
export function shortInstant(iso: string | Date): string {
  const d = typeof iso === "string" ? new Date(iso) : iso;
  if (Number.isNaN(d.getTime())) return String(iso);
  return d
    .toISOString()
    .replace(/:00\.000Z$/, "Z")
    .replace(/\.000Z$/, "Z");
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `Tue 1 Dec` (UTC); with the time when points are less than a day apart: `Tue 1 Dec 06:00`. */
export function dayLabel(iso: string | Date, withTime = false): string {
  const d = typeof iso === "string" ? new Date(iso) : iso;
  const day = `${DAYS[d.getUTCDay()] ?? ""} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()] ?? ""}`;
  return withTime ? `${day} ${d.toISOString().slice(11, 16)}` : day;
}

/** A horizon in words: 604800000 → "7 days", 129600000 → "36 hours", 5400000 → "90 minutes". */
export function horizonWords(ms: number): string {
  const unit =
    ms % 86_400_000 === 0
      ? { n: 86_400_000, w: "day" }
      : ms % 3_600_000 === 0
        ? { n: 3_600_000, w: "hour" }
        : { n: 60_000, w: "minute" };
  const count = Math.round(ms / unit.n);
  return `${count} ${unit.w}${count === 1 ? "" : "s"}`;
}
