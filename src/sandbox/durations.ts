/**
 * Durations for total_runtime_min / total_runtime_max. Accepted forms (the sandbox's choice; the spec only says
 * "duration"):
 *   HH:MM            `00:50`      = 50 minutes
 *   HH:MM:SS[.f]     `02:30:00`   = 2 h 30 min
 *   D HH:MM[:SS]     `01 09:30`   = 1 day 9 h 30 min (also `1 day, 09:30:00` / `2 days 09:30`)
 *   ISO 8601         `PT50M`, `P1DT2H`, `P2W`, `PT90S` (weeks, days, hours, minutes, seconds; no years or months)
 * Returns milliseconds, or null when the text is none of these.
 */
const CLOCK_RE = /^(?:(\d+)\s*(?:days?,?\s*)?\s+)?(\d{1,3}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?$/i;
const ISO_RE =
  /^P(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/i;

const SECOND = 1000,
  MINUTE = 60 * SECOND,
  HOUR = 60 * MINUTE,
  DAY = 24 * HOUR;

export function parseDuration(text: string): number | null {
  const s = text.trim();
  const clock = CLOCK_RE.exec(s);
  if (clock) {
    const [, d = "0", h = "0", mi = "0", sec = "0", frac = ""] = clock;
    if (Number(mi) > 59 || Number(sec) > 59) return null;
    const fraction = frac ? Number(`0.${frac}`) * SECOND : 0;
    return Number(d) * DAY + Number(h) * HOUR + Number(mi) * MINUTE + Number(sec) * SECOND + fraction;
  }
  const iso = ISO_RE.exec(s);
  if (iso && s !== "P" && !s.toUpperCase().endsWith("T")) {
    const num = (v: string | undefined): number => (v ? Number(v.replace(",", ".")) : 0);
    const [, w, d, h, mi, sec] = iso;
    return num(w) * 7 * DAY + num(d) * DAY + num(h) * HOUR + num(mi) * MINUTE + num(sec) * SECOND;
  }
  return null;
}
