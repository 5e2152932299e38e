/** What a plan says, as events: one `rule.planned` per rule, one `plan.error` per error, then `plan.finished`. */
import type { Plan } from "../../plan/types.js";
import type { Logger } from "../../log/types.js";

export function logPlan(
  log: Logger,
  plan: Plan,
  extra: { duration_ms: number; requests: number; shard?: string },
): void {
  for (const r of plan.rules) {
    log.event(
      "rule.planned",
      {
        rule: r.name,
        workflow_id: r.workflow_id,
        selected: r.selected,
        matched: r.matched,
        changes: r.changes,
        skipped: r.skipped,
        status: r.status,
        ...(extra.shard ? { shard: extra.shard } : {}),
      },
      r.status === "failed" ? "error" : "info",
    );
  }
  for (const e of plan.errors) {
    log.event(
      "plan.error",
      {
        code: e.code,
        ...(e.rule ? { rule: e.rule } : {}),
        ...(e.instance_id !== undefined ? { instance_id: e.instance_id } : {}),
        message: e.message,
      },
      "error",
    );
  }
  log.event("plan.finished", {
    base_url: plan.base_url,
    changes: plan.changes.length,
    complete_step: plan.summary.complete_step,
    save_step: plan.summary.save_step,
    abort: plan.summary.abort,
    reports: plan.summary.reports,
    errors: plan.errors.length,
    requests: extra.requests,
    duration_ms: extra.duration_ms,
  });
}
