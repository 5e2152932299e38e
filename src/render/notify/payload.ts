/**
 * The notification document sent at the end of `plan` and `apply` (README.md, "Operating rules in production"):
 * `{ event, base_url, started_at, finished_at, summary, rules, text }`. `text` is what Slack-, Mattermost- and
 * Teams-style incoming webhooks show as is: problems (stale, failed, deferred) first, then counts per rule, then
 * where the plan and the journal are. Built only from the plan and the outcomes: no setting, header or key.
 */
import { MUTATING_KINDS } from "../../actions/index.js";
import type { ChangeOutcome } from "../../apply/outcome.js";
import { countOutcomes } from "../../apply/outcome.js";
import type { Plan, RulePlanSummary } from "../../plan/types.js";
import { summaryLine } from "../plan/summary.js";
import { chatSafe } from "../escape.js";
import { serviceName } from "../../model/settings.js";
import { plural } from "../../text/plural.js";
import { changeCounts, kindCount, ruleAuditCount } from "../../plan/change-counts.js";

export type NotifyEvent = "plan.finished" | "apply.finished";

export interface NotifyPayload {
  event: NotifyEvent;
  base_url: string;
  /** the profile that chose base_url (docs/operating.md, Profiles); absent without one */
  profile?: string;
  started_at: string;
  finished_at: string;
  summary: Record<string, unknown>;
  rules: RulePlanSummary[];
  text: string;
}

/** Problem lines listed in `text` per kind of problem; the rest are counted. */
const MAX_LINES = 5;

function excludedCount(plan: Plan): number {
  return plan.rules.reduce((n, r) => n + (r.excluded ?? 0), 0);
}

function ruleLine(r: RulePlanSummary, audit: number): string {
  if (r.status === "inactive") return `• ${r.name}: inactive (${r.reason ?? "outside its active window"})`;
  const parts = [`${plural(r.changes, "change")}`];
  if (audit > 0) parts.push(`${audit} in audit, not sent`);
  if (r.excluded) parts.push(`${r.excluded} excluded`);
  if (r.skipped) parts.push(`${r.skipped} skipped`);
  return `• ${r.name}: ${parts.join(", ")}${r.status === "failed" ? " — FAILED" : ""}`;
}

function ruleLines(plan: Plan): string[] {
  // counted once, no change kept (src/plan/change-counts.ts): a plan may hold 150,000 changes
  const counts = changeCounts(plan.changes);
  return plan.rules.map((r) => ruleLine(r, ruleAuditCount(counts, r.name)));
}

function where(files: { planFile?: string; journalFile?: string }): string[] {
  return [
    ...(files.planFile ? [`Plan: ${files.planFile}`] : []),
    ...(files.journalFile ? [`Journal: ${files.journalFile}`] : []),
  ];
}

export interface Times {
  startedAt: Date;
  finishedAt: Date;
}

export function planPayload(plan: Plan, times: Times, files: { planFile?: string } = {}): NotifyPayload {
  const counts = changeCounts(plan.changes);
  const audit = counts.audit;
  const excluded = excludedCount(plan);
  const byKind: Record<string, number> = {};
  for (const k of MUTATING_KINDS) byKind[k] = kindCount(counts, k);
  const lines: string[] = [];
  if (plan.errors.length > 0) {
    lines.push(`:warning: ${plural(plan.errors.length, "error")}:`);
    for (const e of plan.errors.slice(0, MAX_LINES)) lines.push(`• ${e.message}`);
    if (plan.errors.length > MAX_LINES) lines.push(`• … ${plan.errors.length - MAX_LINES} more`);
  }
  // the summary line already counts audit changes
  const extra = excluded > 0 ? ` ${plural(excluded, "instance")} excluded.` : "";
  lines.unshift(
    `flowrules plan against ${serviceName(plan.base_url, plan.profile)}: ${summaryLine(plan).replace(/^Plan: /, "")}${extra}`,
  );
  lines.push(...ruleLines(plan), ...where(files));
  return {
    event: "plan.finished",
    base_url: plan.base_url,
    ...(plan.profile ? { profile: plan.profile } : {}),
    started_at: times.startedAt.toISOString(),
    finished_at: times.finishedAt.toISOString(),
    summary: {
      ...plan.summary,
      changes: plan.changes.length,
      audit,
      excluded,
      errors: plan.errors.length,
      by_kind: byKind,
    },
    rules: plan.rules,
    text: chatSafe(lines.join("\n")),
  };
}

export interface ApplyNotice {
  plan: Plan;
  outcomes: ChangeOutcome[];
  /** audit changes of the plan, never sent */
  audit: number;
  planFile: string;
  journalFile: string;
}

function outcomeLine(o: ChangeOutcome): string {
  const c = o.change;
  return `• ${c.rule}, instance ${c.instance_id}, ${c.kind}${c.step_id !== undefined ? ` step ${c.step_id}` : ""}: ${o.reason ?? "no reason recorded"}`;
}

export function applyPayload(n: ApplyNotice, times: Times): NotifyPayload {
  const counts = countOutcomes(n.outcomes);
  const deferred = counts.not_started;
  const byKind: Record<string, number> = {};
  for (const k of MUTATING_KINDS)
    byKind[k] = n.outcomes.filter((o) => o.change.kind === k && o.status === "applied").length;
  const problems = counts.stale + counts.failed + counts.not_acted + deferred;
  const head = [`${counts.applied} applied`];
  if (counts.already_done) head.push(`${counts.already_done} done earlier`);
  if (counts.stale) head.push(`${counts.stale} stale`);
  if (counts.failed + counts.not_acted) head.push(`${counts.failed + counts.not_acted} failed`);
  if (deferred) head.push(`${deferred} deferred`);
  const lines = [
    `${problems > 0 ? ":warning: " : ""}flowrules apply to ${serviceName(n.plan.base_url, n.plan.profile)} ${problems > 0 ? "incomplete" : "complete"}: ${head.join(", ")} ` +
      `(of ${plural(n.outcomes.length, "change")})${n.audit > 0 ? `; ${plural(n.audit, "audit change")} not sent` : ""}`,
  ];
  const sections: Array<[string, ChangeOutcome[]]> = [
    ["Stale", n.outcomes.filter((o) => o.status === "stale")],
    ["Failed", n.outcomes.filter((o) => o.status === "failed" || o.status === "not_acted")],
    ["Deferred (not started)", n.outcomes.filter((o) => o.status === "not_started")],
  ];
  for (const [title, list] of sections) {
    if (list.length === 0) continue;
    lines.push(`${title}:`);
    for (const o of list.slice(0, MAX_LINES)) lines.push(outcomeLine(o));
    if (list.length > MAX_LINES) lines.push(`• … ${list.length - MAX_LINES} more in the journal`);
  }
  lines.push(...ruleLines(n.plan), ...where(n));
  return {
    event: "apply.finished",
    base_url: n.plan.base_url,
    ...(n.plan.profile ? { profile: n.plan.profile } : {}),
    started_at: times.startedAt.toISOString(),
    finished_at: times.finishedAt.toISOString(),
    summary: {
      applied: counts.applied,
      already_done: counts.already_done,
      stale: counts.stale,
      failed: counts.failed,
      not_acted: counts.not_acted,
      // its name before batches were generic, kept for receivers written against it (README.md, "Compatibility notes")
      not_aborted: counts.not_acted,
      deferred,
      audit: n.audit,
      changes: n.outcomes.length,
      by_kind: byKind,
    },
    rules: n.plan.rules,
    text: chatSafe(lines.join("\n")),
  };
}
