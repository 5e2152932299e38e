/**
 * A rule's `active` window: when it runs at all. Pure functions of (window, instant); time zones are read through
 * the platform's Intl by IANA name, so daylight saving and zone rules follow the runtime's time-zone database.
 *
 * `days` and `hours` are both checked on the local time of the instant in `timezone`. Hours may wrap past midnight
 * ("22:00-06:00"); the end is exclusive.
 */

export const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;

export interface ActiveWindow {
  /** epoch ms; the window opens at this instant */
  from?: number;
  /** epoch ms; the window closes at this instant (exclusive) */
  until?: number;
  /** local weekdays, 0 = Sunday */
  days?: number[];
  /** local minutes of the day: [start, end); start > end wraps past midnight */
  hours?: { start: number; end: number; text: string };
  timezone: string;
}

export type Activity = { active: true } | { active: false; reason: string; next?: Date };

export const HOURS_RE = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;

/** "08:00-18:00" → minutes, or a message saying what is allowed. */
export function parseHours(raw: string): { start: number; end: number } | { error: string } {
  const m = HOURS_RE.exec(raw.trim());
  const allowed = 'write "HH:MM-HH:MM" with hours 00-24 and minutes 00-59, e.g. "08:00-18:00" (or "22:00-06:00" across midnight)';
  if (!m) return { error: `hours "${raw}" is not a time range: ${allowed}` };
  const [h1, m1, h2, m2] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  const bad = (h: number, mi: number): boolean => h > 24 || mi > 59 || (h === 24 && mi !== 0);
  if (bad(h1, m1) || bad(h2, m2)) return { error: `hours "${raw}" holds a time that does not exist: ${allowed}` };
  const start = h1 * 60 + m1;
  const end = h2 * 60 + m2;
  if (start === end) return { error: `hours "${raw}" is empty (start and end are the same): ${allowed}` };
  return { start, end };
}

/** Whether the runtime knows this IANA time zone name. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone, weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    formatters.set(timeZone, f);
  }
  return f;
}

const WEEKDAY: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** Local weekday (0 = Sunday) and minute of the day of an instant in a time zone. */
export function localTime(ms: number, timeZone: string): { day: number; minute: number } {
  let day = 0;
  let hour = 0;
  let minute = 0;
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) {
    if (p.type === "weekday") day = WEEKDAY[p.value] ?? 0;
    else if (p.type === "hour") hour = Number(p.value) % 24;
    else if (p.type === "minute") minute = Number(p.value);
  }
  return { day, minute: hour * 60 + minute };
}

function inHours(h: { start: number; end: number }, minute: number): boolean {
  return h.start < h.end ? minute >= h.start && minute < h.end : minute >= h.start || minute < h.end;
}

function fmtMinute(m: number): string {
  return `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
}

/** Whether the local clock is inside `days` and `hours` (ignores from/until). */
function inLocalWindow(w: ActiveWindow, ms: number): boolean {
  if (!w.days && !w.hours) return true;
  const t = localTime(ms, w.timezone);
  if (w.days && !w.days.includes(t.day)) return false;
  return !w.hours || inHours(w.hours, t.minute);
}

const MINUTE = 60_000;
/** A weekly window opens within a week; a little more covers a daylight-saving shift. */
const SEARCH_LIMIT = 8 * 24 * 60;

/** The first instant from `ms` on (to the minute) at which the rule is active, if any. */
export function nextActive(w: ActiveWindow, ms: number): Date | undefined {
  let t = Math.max(ms, w.from ?? ms);
  if (t > ms) {
    if (w.until !== undefined && t >= w.until) return undefined;
    if (inLocalWindow(w, t)) return new Date(t);
  }
  // every boundary of days/hours falls on a whole local minute, and all IANA offsets are whole minutes
  t = Math.ceil((t + 1) / MINUTE) * MINUTE;
  for (let i = 0; i < SEARCH_LIMIT; i++, t += MINUTE) {
    if (w.until !== undefined && t >= w.until) return undefined;
    if (inLocalWindow(w, t)) return new Date(t);
  }
  return undefined;
}

/** Is the rule active at `now`? When not: why, and when it next will be (none when the window has ended). */
export function activity(w: ActiveWindow, now: Date): Activity {
  const ms = now.getTime();
  const iso = (n: number): string => new Date(n).toISOString();
  const next = (): { next?: Date } => {
    const n = nextActive(w, ms);
    return n ? { next: n } : {};
  };
  if (w.until !== undefined && ms >= w.until) return { active: false, reason: `its window ended at ${iso(w.until)}` };
  if (w.from !== undefined && ms < w.from) return { active: false, reason: `its window opens at ${iso(w.from)}`, ...next() };
  const t = localTime(ms, w.timezone);
  const local = `${DAY_NAMES[t.day] ?? "?"} ${fmtMinute(t.minute)} ${w.timezone}`;
  if (w.days && !w.days.includes(t.day)) {
    const names = w.days.map((d) => DAY_NAMES[d]).join(", ");
    return { active: false, reason: `active on ${names} only; it is ${local}`, ...next() };
  }
  if (w.hours && !inHours(w.hours, t.minute)) {
    return { active: false, reason: `active ${w.hours.text} ${w.timezone} only; it is ${local}`, ...next() };
  }
  return { active: true };
}
