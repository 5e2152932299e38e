/**
 * The second half of `flowrules apply` (./apply.ts decides what to apply and takes the run's lock): a loaded plan
 * applied through src/apply/run.ts, and what the person and the pipeline see of it — progress on stderr, change
 * events, the summary on stdout, the notification, the exit code.
 */
import { isAbsolute, relative } from "node:path";
import { defined } from "../model/defined.js";
import type { ApiClient, RequestLimiter } from "../api/index.js";
import {
  DEFAULT_CLOCK_SKEW_MS,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_RECHECK_EVERY_MS,
  sendRatePerMin,
} from "../model/settings.js";
import { durationText } from "../text/duration.js";
import type { HeldLock } from "../fs/lock.js";
import { applyLoadedPlan, type LockWait } from "../apply/run.js";
import type { LoadedPlan } from "../plan/read.js";
import { applyExitCode, countOutcomes } from "../apply/outcome.js";
import { APPLY_FORMATS } from "../render/apply/index.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { logOutcomes } from "../render/events/apply.js";
import { progressView } from "../render/progress/index.js";
import type { CommandIO } from "../log/command-io.js";
import { sendNotification } from "./notify.js";
import { applyPayload } from "../render/notify/payload.js";
import type { ApplyCommandOptions } from "./apply-options.js";

/** A path for messages: relative to cwd when below it. */
export function shown(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/** --lock-wait: while a live apply holds the lock, wait for it (named once, when the wait begins). */
export function lockWait(opts: ApplyCommandOptions, io: CommandIO): LockWait {
  return {
    waitMs: opts.lockWaitMs ?? 0,
    waitText: durationText(opts.lockWaitMs ?? 0),
    how: "--lock-wait",
    ...defined({ pollMs: opts.tuning?.lockPollMs, signal: opts.signal }),
    onWaiting: (holder, wait) => {
      if (!opts.quiet) io.stderr(`flowrules: ${holder}; waiting up to ${wait} for it to finish\n`);
    },
  };
}

export type RunOptions = ApplyCommandOptions & {
  batchSize: number;
  startedAt: Date;
  deadline?: number;
  limiter: RequestLimiter;
};

/**
 * Applies a loaded plan under the run's lock (src/apply/run.ts: journal lock, journal, execution) and shows what
 * happened: progress on stderr, change events, the summary on stdout, the notification, the exit code.
 */
export async function applyLoaded(
  loaded: LoadedPlan,
  journalFile: string,
  opts: RunOptions,
  cwd: string,
  io: CommandIO,
  lock: HeldLock,
): Promise<number> {
  const c = opts.connection;
  const view = progressView(io, { quiet: opts.quiet, ratePerMin: sendRatePerMin(c.rateLimitPerMin) });
  const say = (line: string): void => {
    if (opts.quiet) return;
    view.clear();
    io.stderr(`${line}\n`);
  };
  const log = io.log ?? nullLogger;
  const logClientEvent = clientEventLogger(log);
  // change events stream as outcomes are known; the ones never attempted are logged at the end
  const logged = new Set<string>();
  try {
    const through = opts.writeThrough;
    const run = await applyLoadedPlan(loaded, {
      journalFile,
      lock,
      // with --state, through the state: our writes' answers are written through (reads still reach the service)
      ...(through ? { sendThrough: (client: ApiClient) => through.applying(client) } : {}),
      connection: { ...c, ...defined({ stop: opts.signal }) },
      limiter: opts.limiter,
      ...defined({ deadline: opts.deadline }),
      batchSize: opts.batchSize,
      clockSkewMs: opts.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
      recheckEveryMs: opts.recheckEveryMs ?? DEFAULT_RECHECK_EVERY_MS,
      lockTimeoutMs: opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
      lockWait: lockWait(opts, io),
      ...defined({ profileName: opts.profile?.name, tuning: opts.tuning }),
      shown: (f) => shown(f, cwd),
      say,
      warn: (line) => io.stderr(`${line}\n`),
      onClientEvent: (e) => {
        logClientEvent(e);
        view.clientEvent(e);
      },
      onOutcome: (o) => {
        logged.add(o.change.id);
        logOutcomes(log, [o]);
      },
      onProgress: (p) => view.apply(p),
      onCheck: (check) => log.event("apply.checked", { ...check }, "debug"),
    });
    view.finish();
    const counts = countOutcomes(run.outcomes);
    logOutcomes(
      log,
      run.outcomes.filter((o) => !logged.has(o.change.id)),
    );
    log.event("apply.finished", {
      plan_file: shown(loaded.file, cwd),
      journal: shown(journalFile, cwd),
      changes: run.outcomes.length,
      ...counts,
      not_aborted: counts.not_acted,
      audit: run.audit.length,
      requests: run.stats.total,
    });
    const summary = APPLY_FORMATS[opts.format ?? "text"]({
      kind: "applied",
      baseUrl: run.baseUrl,
      audit: run.audit,
      outcomes: run.outcomes,
      stats: run.stats,
      journalFile: shown(journalFile, cwd),
      planFile: shown(loaded.file, cwd),
      listedAsChanged: run.listedAsChanged,
      readToCheck: run.readToCheck,
      checks: run.checks,
      ...(opts.maxDurationMs !== undefined ? { maxDuration: durationText(opts.maxDurationMs) } : {}),
      plan: loaded.plan,
      ...(opts.signal?.aborted ? { stopped: true } : {}),
    });
    io.stdout(summary);
    const files = { planFile: shown(loaded.file, cwd), journalFile: shown(journalFile, cwd) };
    await sendNotification(
      opts.notify,
      applyPayload(
        {
          plan: opts.profile ? { ...loaded.plan, profile: opts.profile.name } : loaded.plan,
          outcomes: run.outcomes,
          audit: run.audit.length,
          ...files,
        },
        { startedAt: opts.startedAt, finishedAt: new Date() },
      ),
      io,
    );
    return applyExitCode(run.outcomes, opts.detailedExitcode);
  } finally {
    view.finish();
  }
}
