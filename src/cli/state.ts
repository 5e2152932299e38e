/** `--resync-after` of `--state` (src/state/README.md); the flags themselves are lines of PLANNING_FLAGS (./settings.ts). */
import { UserError } from "../model/errors.js";

/** "30m", "12h", "7d", "90s" (a bare number is hours) → milliseconds. */
export function parseResyncAfter(raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d)?\s*$/i.exec(raw);
  if (!m) throw new UserError(`--resync-after must be a duration such as 30m, 12h, 7d; got "${raw}"`);
  const n = Number(m[1]);
  const unit = (m[2] ?? "h").toLowerCase();
  const ms = n * ({ s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 } as Record<string, number>)[unit]!;
  if (ms < 1000) throw new UserError(`--resync-after must be at least 1 s, got "${raw}"`);
  return Math.round(ms);
}

