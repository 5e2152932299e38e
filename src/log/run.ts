/**
 * One verb's run as events: `run.started`, then whatever the command logs, then `run.finished` with the exit code,
 * the duration and counts tallied from the events of the run — so every verb reports counts the same way without
 * threading counters through the commands. A thrown error is left to the CLI entry, which logs `run.failed`.
 */
import type { CommandIO } from "./command-io.js";
import { nullLogger } from "./null.js";
import type { LogFields, Logger } from "./types.js";
import { VERSION } from "../model/version.js";

/** Counters of run.finished: event name → key (and optionally a numeric field of the event to add up). */
const TALLIES: Array<{ event: string; key: string; field?: string }> = [
  { event: "rule.planned", key: "rules" },
  { event: "rule.planned", key: "changes_planned", field: "changes" },
  { event: "change.applied", key: "applied" },
  { event: "change.skipped", key: "skipped" },
  { event: "change.failed", key: "failed" },
  { event: "change.deferred", key: "deferred" },
  { event: "plan.error", key: "errors" },
  { event: "rule.diagnostic", key: "diagnostics" },
  { event: "request.retried", key: "retries" },
  { event: "plan.finished", key: "requests", field: "requests" },
  { event: "apply.finished", key: "requests", field: "requests" },
  { event: "explain.finished", key: "requests", field: "requests" },
];

function tallying(log: Logger, counts: Map<string, number>): Logger {
  return {
    structured: log.structured,
    event(name, fields, level) {
      for (const t of TALLIES) {
        if (t.event !== name) continue;
        const v = t.field === undefined ? 1 : fields?.[t.field];
        if (typeof v === "number") counts.set(t.key, (counts.get(t.key) ?? 0) + v);
      }
      log.event(name, fields, level);
    },
  };
}

export async function runLogged(
  io: CommandIO,
  command: string,
  fields: LogFields,
  body: (io: CommandIO) => Promise<number>,
  clock: () => number = Date.now,
): Promise<number> {
  const log = io.log ?? nullLogger;
  const counts = new Map<string, number>();
  const inner = tallying(log, counts);
  const started = clock();
  log.event("run.started", { command, flowrules_version: VERSION, ...fields });
  const exit = await body({ ...io, log: inner });
  log.event(
    "run.finished",
    {
      command,
      exit_code: exit,
      duration_ms: clock() - started,
      ...Object.fromEntries(counts),
    },
    exit === 1 ? "error" : "info",
  );
  return exit;
}
