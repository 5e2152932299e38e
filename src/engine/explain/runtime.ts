/**
 * total_runtime values of the instance list (`00:50`, `01 09:30`, `02:30:00`, ISO 8601 `PT50M`) → milliseconds, so the
 * total_runtime filters can be checked on a record (started_time to the end, or to `now` while running).
 */
const CLOCK_RE = /^(?:(\d+) )?(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d{1,6})?))?$/;
const ISO_RE = /^P(?!$)(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

const n = (s: string | undefined): number => (s === undefined ? 0 : Number(s));

export function runtimeMs(text: string): number | undefined {
  const s = text.trim();
  const c = CLOCK_RE.exec(s);
  if (c) return (((n(c[1]) * 24 + n(c[2])) * 60 + n(c[3])) * 60 + n(c[4])) * 1000;
  const i = ISO_RE.exec(s);
  if (i) return ((((n(i[1]) * 7 + n(i[2])) * 24 + n(i[3])) * 60 + n(i[4])) * 60 + n(i[5])) * 1000;
  return undefined;
}

/** e.g. "3d 4h 05m" — for messages only. */
export function showRuntime(ms: number): string {
  const min = Math.floor(ms / 60_000);
  const d = Math.floor(min / 1440);
  const h = Math.floor((min % 1440) / 60);
  const m = min % 60;
  return `${d > 0 ? `${d}d ` : ""}${h}h ${String(m).padStart(2, "0")}m`;
}
