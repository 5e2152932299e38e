/**
 * The watcher's words on stderr (docs/watch.md, "Output"): one line per cycle, then one line per change the cycle
 * planned or applied — named as `apply` names them (../apply/text.ts) — and the lines of its life: watching,
 * reloads, failures, stop. Text only; with `--log-format json` the loop logs events instead (./events.ts).
 * Rule names and reasons come from files and the service: every line goes through textSafe.
 */
import type { ChangeOutcome } from "../../apply/outcome.js";
import type { PlannedChange } from "../../plan/types.js";
import { changeWords } from "../apply/text.js";
import { textSafe } from "../escape.js";

/** What one cycle did, for its line and its events. */
export interface CycleReport {
  n: number;
  /**
   * why it ran: first (the watcher's first cycle, once), update (a poll found one), window (a rule's active window
   * opened), time (rules that move with time), reload, retry (after a cycle that failed or held rules back, on the
   * back-off)
   */
  kind: "first" | "update" | "window" | "time" | "reload" | "retry";
  rules: number;
  /** enforce changes planned */
  planned: number;
  audit: number;
  applied: number;
  stale: number;
  failed: number;
  /** not sent: the watcher was stopped (they are planned again by the next cycle) */
  deferred: number;
  errors: string[];
  /** rules held back by their own data (their changes not applied, the others' applied) */
  held: string[];
  requests: number;
  durationMs: number;
  /** with --apply */
  apply: boolean;
}

const s = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

export function cycleLine(r: CycleReport, at: Date = new Date()): string {
  const parts = [`${r.planned} planned`];
  if (r.apply) parts.push(`${r.applied} applied`, `${r.stale} stale`, `${r.failed} failed`);
  else parts.push("not applied (no --apply)");
  if (r.deferred > 0) parts.push(`${r.deferred} not sent (stopping)`);
  if (r.audit > 0) parts.push(`${r.audit} audit`);
  if (r.held.length > 0)
    parts.push(
      `partly applied: ${s(r.held.length, "rule")} held back (${r.held.slice(0, 5).join(", ")}${r.held.length > 5 ? `, … and ${r.held.length - 5} more` : ""})`,
    );
  if (r.errors.length > 0) parts.push(`${s(r.errors.length, "error")} (below)`);
  return textSafe(
    `${at.toISOString()} cycle ${r.n} (${r.kind}, ${s(r.rules, "rule")}): ${parts.join(", ")}; ${r.requests} requests, ${(r.durationMs / 1000).toFixed(1)} s`,
  );
}

/** A cycle a stop cut short while it planned: nothing was applied. */
export function stoppedCycleLine(
  n: number,
  kind: CycleReport["kind"],
  rules: number,
  requests: number,
  at: Date = new Date(),
): string {
  return `${at.toISOString()} cycle ${n} (${kind}, ${s(rules, "rule")}): stopped while planning, nothing applied; ${requests} requests`;
}

/** Every error of a cycle, one line each under its line, at most `max`; then how many more. */
export function errorLines(errors: readonly string[], max: number): string[] {
  const lines = errors.slice(0, max).map((e) => textSafe(`  error: ${e}`));
  if (errors.length > max) lines.push(`  … and ${errors.length - max} more errors (--log-format json lists them all)`);
  return lines;
}

const OUTCOME_WORD: Record<ChangeOutcome["status"], string> = {
  applied: "applied",
  already_done: "done earlier",
  stale: "stale",
  failed: "failed",
  not_acted: "not acted on",
  not_started: "not started",
  deferred: "not sent",
};

/**
 * One line per change, indented under the cycle's line: what the cycle applied (and what it could not), or without
 * --apply what it would do. At most `max` lines; then one line with the rest's count and where to find them (of
 * `total`: `changes` may be only the first few of them).
 */
export function changeLines(
  changes: ReadonlyArray<ChangeOutcome | { change: PlannedChange; status: "planned" }>,
  max: number,
  more: string,
  total = changes.length,
): string[] {
  const lines = changes.slice(0, max).map((o) => {
    const word = o.status === "planned" ? "planned" : OUTCOME_WORD[o.status];
    const reason = "reason" in o && o.reason && o.status !== "applied" ? `: ${o.reason}` : "";
    return textSafe(`  ${word}: ${changeWords(o.change)}${reason}`);
  });
  if (total > max) lines.push(`  … and ${total - max} more (${more})`);
  return lines;
}

export function watchingLine(rules: number, workflows: number, intervalMs: number, apply: boolean): string {
  return `flowrules: watching ${s(rules, "rule")} of ${s(workflows, "workflow")}, polling every ${(intervalMs / 1000).toFixed(1)} s${apply ? "" : " (no --apply: nothing is sent)"}`;
}

export function cycleFailedLine(message: string, backoffMs: number, at: Date = new Date()): string {
  return textSafe(
    `${at.toISOString()} watch: cycle failed (${message}); trying again in ${Math.round(backoffMs / 1000)} s`,
  );
}

/** After a cycle that held rules back or failed: when they are tried again (sooner if a poll finds an update). */
export function retryLine(result: "partial" | "failed", inARow: number, waitMs: number, capMs: number): string {
  const what = result === "partial" ? "the held rules are" : "the failed work is";
  return `flowrules: ${what} tried again in ${(waitMs / 1000).toFixed(1)} s (${inARow} cycle${inARow === 1 ? "" : "s"} in a row not fully applied; the wait doubles each time, up to ${Math.round(capMs / 1000)} s)`;
}

export function resumingLine(planFile: string): string {
  return textSafe(`flowrules: resuming the unfinished cycle ${planFile} from its journal`);
}

/** One line for an unfinished cycle whose plan cannot be read (`problem` names the file): set aside, not retried. */
export function setAsideLine(problem: string, movedTo: string): string {
  return textSafe(
    `flowrules: warning: cannot resume an unfinished cycle: ${problem}; set aside as ${movedTo}, planning afresh`,
  );
}

export function reloadedLine(why: string, rules: number, digest: string, changed: boolean): string {
  return textSafe(
    `flowrules: ${why}: ${changed ? "reloaded" : "read again, unchanged:"} ${s(rules, "rule")} (digest ${digest.slice(0, 19)}…)`,
  );
}

export function reloadFailedLine(why: string, kept: number): string {
  return textSafe(
    `flowrules: ${why}: the reload did not validate (the problems are above); keeping the ${s(kept, "rule")} loaded before`,
  );
}

export function needsRestartLine(what: string[]): string {
  return textSafe(
    `flowrules: the config changed ${what.join(", ")}: that takes effect only when the watcher starts again; the rest was reloaded`,
  );
}

export function metricsLine(host: string, port: number): string {
  return `flowrules: metrics on http://${host.includes(":") ? `[${host}]` : host}:${port}/metrics, /healthz and /readyz`;
}

export function stoppedLine(cycles: number, stateDir: string): string {
  return textSafe(`flowrules: watcher stopped after ${s(cycles, "cycle")}; state written to ${stateDir}`);
}
