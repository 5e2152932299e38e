/**
 * A watcher's cycle as events (`--log-format json`, docs/watch.md): `watch.cycle` with its counts, and one event per
 * change — `change.applied` / `change.skipped` / `change.failed` / `change.deferred` as apply logs them (./apply.ts),
 * or `change.planned` without --apply — each with the cycle's number.
 */
import type { ChangeOutcome } from "../../apply/outcome.js";
import type { Logger } from "../../log/types.js";
import type { PlannedChange } from "../../plan/types.js";
import type { CycleReport } from "../watch/text.js";
import { logOutcomes } from "./apply.js";

/** The logger with `fields` added to every event (a cycle's number on its change events). */
export function withFields(log: Logger, fields: Record<string, unknown>): Logger {
  return { structured: log.structured, event: (name, f, level) => log.event(name, { ...fields, ...f }, level) };
}

export function logCycle(log: Logger, r: CycleReport): void {
  log.event(
    "watch.cycle",
    {
      cycle: r.n,
      kind: r.kind,
      rules: r.rules,
      planned: r.planned,
      audit: r.audit,
      applied: r.applied,
      stale: r.stale,
      failed: r.failed,
      deferred: r.deferred,
      errors: r.errors,
      held: r.held,
      requests: r.requests,
      duration_ms: r.durationMs,
      apply: r.apply,
    },
    r.errors.length === 0 && r.failed === 0 ? "info" : "error",
  );
}

/** One event per change of a cycle (`fields` say which: its number, or the plan file of a resumed one). */
export function logCycleChanges(
  log: Logger,
  fields: Record<string, unknown>,
  applied: ChangeOutcome[] | undefined,
  planned: Iterable<PlannedChange>,
): void {
  const mine = withFields(log, fields);
  if (applied) {
    logOutcomes(mine, applied);
    return;
  }
  for (const c of planned) {
    mine.event("change.planned", {
      change_id: c.id,
      rule: c.rule,
      instance_id: c.instance_id,
      kind: c.kind,
      ...(c.step_id !== undefined ? { step_id: c.step_id } : {}),
      ...(c.audit ? { audit: true } : {}),
    });
  }
}
