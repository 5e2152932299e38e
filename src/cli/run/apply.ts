/**
 * What `flowrules apply` does when it runs (its flags: ../apply.ts): the terminal prompt; the logic lives in
 * src/commands/apply.ts.
 *
 * Signals (../signals.ts): the first SIGINT/SIGTERM/SIGHUP stops starting changes (those in flight finish and are
 * journalled, the summary is printed, the lock released); the changes not started are deferred, as at
 * --max-duration, so the exit code is 0 unless something failed or went stale, and the same apply again resumes them
 * (docs/operating.md, "Applying safely"). A second signal exits at once; the lock file is removed on exit either way.
 */
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { z } from "zod";
import type { Confirm } from "../../commands/apply.js";
import { runLogged } from "../../log/index.js";
import { UserError } from "../../model/errors.js";
import {
  ApplyingSettingsSchema,
  DEFAULT_BATCH_SIZE,
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_LOCK_FILE,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_RECHECK_EVERY_MS,
  MAX_BATCH_SIZE,
} from "../../model/settings.js";
import { APPLY_FORMAT_NAMES } from "../../render/format-names.js";
import { runFields, runSettings, serviceIO } from "../settings.js";
import { interruptions } from "../signals.js";

/** "30" (minutes), "90s", "30m", "2h" → milliseconds. */
export function parseLockTimeout(raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*$/i.exec(raw);
  if (!m) throw new UserError(`--lock-timeout must be minutes or a duration such as 90s, 30m, 2h; got "${raw}"`);
  const n = Number(m[1]);
  const unit = (m[2] ?? "m").toLowerCase();
  const ms = unit === "s" ? n * 1000 : unit === "h" ? n * 3_600_000 : n * 60_000;
  if (ms < 1000) throw new UserError(`--lock-timeout must be at least 1 s, got "${raw}"`);
  return ms;
}

/** --max-duration and --lock-wait: "90s", "14m", "2h" (a bare number is seconds) → milliseconds. */
export function parseMaxDuration(raw: string, flag = "--max-duration"): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*$/i.exec(raw);
  if (!m) throw new UserError(`${flag} must be a duration such as 90s, 14m, 2h; got "${raw}"`);
  const n = Number(m[1]);
  const unit = (m[2] ?? "s").toLowerCase();
  return Math.round(unit === "s" ? n * 1000 : unit === "h" ? n * 3_600_000 : n * 60_000);
}

const Flags = z.object({
  autoApprove: z.boolean().optional(),
  journal: z.string().optional(),
  batchSize: z.string().optional(),
  lockFile: z.string().optional(),
  lockTimeout: z.string().optional(),
  clockSkew: z.string().optional(),
  recheckEvery: z.string().optional(),
  maxDuration: z.string().optional(),
  lockWait: z.string().optional(),
  format: z.enum(APPLY_FORMAT_NAMES).optional(),
});

function wholeNumber(name: string, raw: string | undefined, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new UserError(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function terminalConfirm(): Confirm {
  return {
    isTTY: process.stdin.isTTY === true,
    async ask(question) {
      // the question goes to stderr: stdout carries the plan
      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
      // Ctrl-C or Ctrl-D at the prompt is a "no" (readline would otherwise leave the question pending forever)
      const cancel = new AbortController();
      rl.on("SIGINT", () => cancel.abort());
      rl.on("close", () => cancel.abort());
      try {
        return await rl.question(question, { signal: cancel.signal });
      } catch {
        return "";
      } finally {
        rl.close();
      }
    },
  };
}

export async function apply(paths: string[], raw: Record<string, unknown>, command: Command): Promise<void> {
  const parsed = Flags.safeParse(raw);
  if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const f = parsed.data;
  const run = runSettings(raw, process.env);
  const io = serviceIO(command, run.connection);
  const applying = ApplyingSettingsSchema.parse({
    autoApprove: f.autoApprove === true,
    ...(f.journal ? { journal: f.journal } : {}),
    batchSize: wholeNumber("batch-size", f.batchSize, 1, MAX_BATCH_SIZE, DEFAULT_BATCH_SIZE),
    lockFile: f.lockFile ?? DEFAULT_LOCK_FILE,
    lockTimeoutMs: f.lockTimeout ? parseLockTimeout(f.lockTimeout) : DEFAULT_LOCK_TIMEOUT_MS,
    clockSkewMs: wholeNumber("clock-skew", f.clockSkew, 0, 86_400, DEFAULT_CLOCK_SKEW_MS / 1000) * 1000,
    recheckEveryMs: wholeNumber("recheck-every", f.recheckEvery, 1, 86_400, DEFAULT_RECHECK_EVERY_MS / 1000) * 1000,
    ...(f.maxDuration !== undefined ? { maxDurationMs: parseMaxDuration(f.maxDuration), maxDurationText: f.maxDuration.trim() } : {}),
    ...(f.lockWait !== undefined ? { lockWaitMs: parseMaxDuration(f.lockWait, "--lock-wait"), lockWaitText: f.lockWait.trim() } : {}),
  });
  const { signal, dispose } = interruptions(io);
  try {
    const fields = { paths, auto_approve: applying.autoApprove, ...runFields(run) };
    process.exitCode = await runLogged(io, "apply", fields, async (io) => (await import("../../commands/apply.js")).applyCommand(
      {
        paths,
        ...applying,
        // the same planning settings as `plan`, whole (src/cli/settings.ts)
        ...run.planning,
        ...(run.profile ? { profile: run.profile } : {}),
        ...(f.format ? { format: f.format } : {}),
        detailedExitcode: run.output.detailedExitcode,
        quiet: run.output.quiet,
        connection: run.connection,
        ...(run.output.notify.length > 0 ? { notify: { urls: run.output.notify } } : {}),
        confirm: terminalConfirm(),
        signal,
      },
      io,
    ));
  } finally {
    dispose();
  }
}
