/**
 * The one grammar of every duration a user types (`--max-duration 14m`, `--resync-after 12h`, `--timeout 30s`): a
 * number and a unit, always. Three readers used to give a bare number three units (minutes, seconds, hours),
 * so a bare number is refused in one line naming the units, except where the documented contract writes a bare
 * form (`--recheck-every SECONDS`, docs/operating.md), which the caller then allows explicitly.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

/** The units as a message names them. */
export const DURATION_UNITS = "ms, s, m, h or d";

/**
 * The longest duration any setting takes: 24 days. Node's timers hold at most 2^31 - 1 ms (about 24.8 days) and turn a
 * longer delay into 1 ms, so `--interval 25d` polled without pause; a longer value is refused as it is read.
 */
export const MAX_DURATION_MS = 24 * 86_400_000;

/** The longest span a duration that no timer waits takes (a forecast's horizon, `--since` ago): ten years. */
export const MAX_SPAN_MS = 3650 * 86_400_000;

export type DurationResult = { ok: true; ms: number } | { ok: false; problem: string };

/**
 * "90s", "14m", "2h", "7d", "500ms", "1.5h" → milliseconds. `bare` is the unit of a bare number where the contract
 * documents one; without it a bare number is a problem that names the units. The problem is the words after the
 * setting's name ("needs a unit: …").
 */
export function readDuration(
  raw: string,
  opts: {
    bare?: "s";
    min?: number;
    max?: number;
    /** false: a span no timer waits for (bounded by MAX_SPAN_MS) */ timer?: boolean;
  } = {},
): DurationResult {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)?\s*$/i.exec(raw);
  if (!m)
    return {
      ok: false,
      problem: `must be a duration such as 90s, 5m or 24h (a number and ${DURATION_UNITS}); got ${JSON.stringify(raw)}`,
    };
  const unit = (m[2]?.toLowerCase() ?? opts.bare) as Unit | undefined;
  if (unit === undefined)
    return {
      ok: false,
      problem: `needs a unit: ${m[1]}s, ${m[1]}m or ${m[1]}h (ms, s, m, h or d); got ${JSON.stringify(raw)}`,
    };
  const ms = Math.round(Number(m[1]) * UNIT_MS[unit]);
  const min = opts.min ?? 0;
  const cap = opts.timer === false ? MAX_SPAN_MS : MAX_DURATION_MS;
  const max = Math.min(opts.max ?? cap, cap);
  if (!(ms <= max))
    return {
      ok: false,
      problem: `must be at most ${durationText(max)}${max === MAX_DURATION_MS ? " (a timer cannot wait longer)" : ""}, got ${JSON.stringify(raw)}`,
    };
  if (ms < min) return { ok: false, problem: `must be at least ${durationText(min)}, got ${JSON.stringify(raw)}` };
  return { ok: true, ms };
}

/** Milliseconds as the shortest exact duration: 90000 → "90s", 840000 → "14m", 800 → "800ms", 0 → "0s". */
export function durationText(ms: number): string {
  if (ms === 0) return "0s";
  for (const unit of ["d", "h", "m", "s"] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms}ms`;
}
