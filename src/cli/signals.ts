/**
 * Signals of the verbs that talk to the service (`plan`, `apply`, `watch`): one helper (docs/watch.md, "Signals").
 *
 *   first SIGTERM / SIGINT   the run's stop signal aborts: no new request starts (one waiting for a rate-limit slot or
 *                            a retry gives up at once), those in flight finish and are journalled, then the verb ends
 *                            as on a clean stop (state, bookmarks, lock) and exits 0 (plan: 1, it made no plan)
 *   SIGHUP                   with `onReload` (watch): reload between cycles, never a stop; otherwise (a terminal
 *                            closed under a plan or an apply) a stop like SIGTERM, so it never kills silently
 *   a second stop signal     exit at once (128 + the signal's number): the journal is written line by line, so the
 *                            next run decides by reading whatever was in flight; the exit handlers remove the locks
 *   a stop still running     after STOP_GRACE_MS (a request in flight that does not finish): leave, exit 1, as a
 *                            second signal would — so the process is gone within the 10 s of the contract, before
 *                            Kubernetes' SIGKILL (30 s) or systemd's
 */
import type { CommandIO } from "../log/command-io.js";
import { EXIT_ERROR } from "../model/errors.js";

/** Time from the first stop signal to leaving anyway: under the contract's 10 s. */
export const STOP_GRACE_MS = 9_000;

const CODE: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

export interface Interruptions {
  /** aborted by the first stop signal (its reason is the signal's name) */
  signal: AbortSignal;
  /** removes the handlers (the verb is over) */
  dispose(): void;
}

export interface InterruptionOptions {
  /** SIGHUP reloads instead of stopping (the watcher) */
  onReload?: () => void;
  /** default STOP_GRACE_MS */
  graceMs?: number;
}

/** Installs the handlers for one verb's run; `io` says the signal in the run's log format. */
export function interruptions(io: CommandIO, opts: InterruptionOptions = {}): Interruptions {
  const controller = new AbortController();
  let disposed = false;
  const log = io.log;
  const say = (line: string, event: string, fields: Record<string, unknown>): void => {
    if (log?.structured) log.event(event, fields, "warn");
    // on a terminal, below the progress line rather than glued to its end
    else io.stderr(`${io.stderrIsTTY ? "\n" : ""}flowrules: ${line}\n`);
  };
  const stop = (sig: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      say(`${sig} again: leaving at once; the journal decides what was in flight at the next run`, "run.leaving", {
        signal: sig,
      });
      process.exit(CODE[sig] ?? EXIT_ERROR);
    }
    say(`${sig}: stopping — no new request; finishing those in flight (again to stop at once)`, "run.stopping", {
      signal: sig,
    });
    controller.abort(sig);
    const grace = opts.graceMs ?? STOP_GRACE_MS;
    // unref'd: a run that ends in time is not kept alive by it
    setTimeout(() => {
      // the verb is over and only a lingering handle (a socket closing) holds the process: its exit code stands
      if (disposed) process.exit();
      say(
        `still busy ${Math.round(grace / 1000)} s after ${sig} (a request in flight has not finished): leaving; the journal decides it at the next run`,
        "run.leaving",
        { signal: sig, after_ms: grace },
      );
      process.exit(EXIT_ERROR);
    }, grace).unref();
  };
  const onHup = (sig: NodeJS.Signals): void => {
    if (opts.onReload && !controller.signal.aborted) opts.onReload();
    else stop(sig);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  process.on("SIGHUP", onHup);
  // signals that came while the verb's modules loaded (kept by ./index.ts, before its first await): handled now
  const take = (globalThis as Record<symbol, unknown>)[Symbol.for("flowrules.takeEarlySignals")];
  if (typeof take === "function") for (const sig of take() as NodeJS.Signals[]) (sig === "SIGHUP" ? onHup : stop)(sig);
  return {
    signal: controller.signal,
    dispose: () => {
      disposed = true;
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      process.off("SIGHUP", onHup);
    },
  };
}
