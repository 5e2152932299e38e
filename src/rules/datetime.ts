/**
 * Date-time values in `select`: an ISO 8601 date-time, `now`, or a signed ISO 8601 duration relative to the plan's
 * start (`-P30D`, `-PT6H`, `+P1W`). Relative values are resolved once, at plan time, so every page of one plan uses the
 * same instant.
 */

export interface Duration {
  sign: 1 | -1;
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

const DURATION_RE =
  /^([+-])P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Parses a signed ISO 8601 duration; undefined when `s` is not one (the sign is required). */
export function parseSignedDuration(s: string): Duration | undefined {
  const m = DURATION_RE.exec(s.trim());
  if (!m) return undefined;
  const [, sign, y, mo, w, d, h, mi, se] = m;
  // "-P" or "-PT" alone carry no amount
  if ([y, mo, w, d, h, mi, se].every((p) => p === undefined)) return undefined;
  if (s.includes("T") && [h, mi, se].every((p) => p === undefined)) return undefined;
  const n = (p: string | undefined): number => (p === undefined ? 0 : Number(p));
  return {
    sign: sign === "-" ? -1 : 1,
    years: n(y), months: n(mo), weeks: n(w), days: n(d), hours: n(h), minutes: n(mi), seconds: n(se),
  };
}

/** Adds a duration to an instant, calendar-aware for years and months (UTC). */
export function addDuration(at: Date, d: Duration): Date {
  const r = new Date(at.getTime());
  r.setUTCFullYear(r.getUTCFullYear() + d.sign * d.years, r.getUTCMonth() + d.sign * d.months);
  const ms = ((d.weeks * 7 + d.days) * 86_400 + d.hours * 3_600 + d.minutes * 60 + d.seconds) * 1_000;
  return new Date(r.getTime() + d.sign * ms);
}

const ISO_DATE_TIME_RE =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** True for an ISO 8601 date or date-time the service accepts. */
export function isIsoDateTime(s: string): boolean {
  return ISO_DATE_TIME_RE.test(s) && !Number.isNaN(Date.parse(s));
}

/** True when `s` is a valid date-time value for `select`: ISO 8601, `now`, or a signed duration. */
export function isDateTimeValue(s: string): boolean {
  return s === "now" || parseSignedDuration(s) !== undefined || isIsoDateTime(s);
}

/** Resolves a `select` date-time value against the plan's start, to an ISO 8601 UTC string. */
export function resolveDateTime(value: string, now: Date): string {
  if (value === "now") return now.toISOString();
  const d = parseSignedDuration(value);
  if (d) return addDuration(now, d).toISOString();
  if (isIsoDateTime(value)) return new Date(value).toISOString();
  throw new Error(`not a date-time, "now" or a signed ISO 8601 duration: ${JSON.stringify(value)}`);
}

/** The date-time query parameters of the instance list (relative values allowed in `select`). */
export const DATE_TIME_PARAMS: readonly string[] = [
  "started_time", "last_updated_time", "deadline", "step_deadline", "aborted_time", "completed_time", "ended_time",
].flatMap((p) => [`${p}_after`, `${p}_before`]);
