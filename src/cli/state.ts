/** `--state DIR` (env FLOWRULES_STATE), `--resync-after`, `--full-refresh` on plan and apply (src/state/README.md). */
import type { Command } from "commander";
import { UserError } from "../model/errors.js";
import { DEFAULT_RESYNC_AFTER_MS, type StateSettings } from "../state/index.js";

export const STATE_ENV = "FLOWRULES_STATE";

export function addStateOptions(cmd: Command): Command {
  return cmd
    .option("--state <dir>", `keep what each run learned in this dir and ask the service only for what changed since (env ${STATE_ENV}); the plan is the same as without it`)
    .option("--resync-after <duration>", "with --state: read a workflow in full again when its last full read is older than this (30m, 12h, 7d; default 24h)")
    .option("--full-refresh", "with --state: read everything again and rewrite the state");
}

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

/** The state settings in effect, or undefined without --state / FLOWRULES_STATE. */
export function stateSettings(opts: Record<string, unknown>, env: Record<string, string | undefined>): StateSettings | undefined {
  const dir = typeof opts.state === "string" ? opts.state : env[STATE_ENV];
  const resync = typeof opts.resyncAfter === "string" ? parseResyncAfter(opts.resyncAfter) : undefined;
  if (dir === undefined || dir.trim() === "") {
    if (resync !== undefined || opts.fullRefresh === true) throw new UserError(`--resync-after and --full-refresh need --state DIR (or ${STATE_ENV})`);
    return undefined;
  }
  return { dir, resyncAfterMs: resync ?? DEFAULT_RESYNC_AFTER_MS, fullRefresh: opts.fullRefresh === true };
}
