/**
 * The closing summary of an apply (stdout): one headline, a table by kind, one line per stale / failed / not acted on
 * (in its batch kind's words: "not aborted") / not started change (rule, instance, kind, reason), the number of requests, and where the journal is. Plain text,
 * no secrets: reasons come from our own words and the service's `detail`, which the client already redacts.
 */
import { batchWords, MUTATING_KINDS } from "../../actions/index.js";
import type { RequestStats } from "../../api/index.js";
import type { StalenessCheck } from "../../apply/types.js";
import type { PlannedChange } from "../../plan/types.js";
import { countOutcomes, type ChangeOutcome, type OutcomeStatus } from "../../apply/outcome.js";
import { textSafeLines } from "../escape.js";
import type { ApplyReport, SummaryInput } from "./types.js";
import { table } from "../table.js";
import { plural } from "../../text/plural.js";
import { NO_NAMES, stepName, type PlanNames } from "../plan/names.js";
import { appliedLines, inPlanOrder, namesOf } from "./changes.js";

export type { SummaryInput } from "./types.js";

const COLUMNS: Array<{ status: OutcomeStatus; title: string }> = [
  { status: "applied", title: "applied" },
  { status: "already_done", title: "done earlier" },
  { status: "stale", title: "stale" },
  { status: "failed", title: "failed" },
  { status: "not_acted", title: "not acted on" },
  { status: "not_started", title: "not started" },
  { status: "deferred", title: "deferred" },
];
/** `not_acted` is one section per batch kind, in its words: "Not aborted (the bulk abort did not return their ids):" */
const SECTIONS: Array<{ status: OutcomeStatus; title: string }> = [
  { status: "stale", title: "Stale, skipped (the plan no longer holds for them):" },
  { status: "failed", title: "Failed:" },
  { status: "not_acted", title: "" },
  { status: "not_started", title: "Not started:" },
];

/** Changes of `status`, under their headings: one heading, or one per kind for `not_acted`. */
function sections(
  outcomes: ChangeOutcome[],
  section: { status: OutcomeStatus; title: string },
): Array<[string, ChangeOutcome[]]> {
  const list = outcomes.filter((o) => o.status === section.status);
  if (section.status !== "not_acted") return [[section.title, list]];
  return MUTATING_KINDS.map((k): [string, ChangeOutcome[]] => {
    const w = batchWords(k);
    return [
      `${w.notDone.charAt(0).toUpperCase()}${w.notDone.slice(1)} (the ${w.request} did not return their ids):`,
      list.filter((o) => o.change.kind === k),
    ];
  });
}

/** "2 not aborted, 1 not tagged": the not_acted changes counted per kind, in its words. */
function notActedHead(outcomes: ChangeOutcome[]): string[] {
  return MUTATING_KINDS.flatMap((k) => {
    const n = outcomes.filter((o) => o.status === "not_acted" && o.change.kind === k).length;
    return n > 0 ? [`${n} ${batchWords(k).notDone}`] : [];
  });
}

function countTable(rows: string[][]): string[] {
  // the kind on the left, counts right-aligned
  return table(rows, { align: (rows[0] ?? []).map((_, i) => (i === 0 ? "left" : "right")) });
}

/**
 * One change as apply's lines name it: rule, instance, kind and step, the step's name beside its id when the plan
 * knows it (`watch` lists a cycle's changes with it).
 */
export function changeWords(c: PlannedChange, names: PlanNames = NO_NAMES): string {
  const name = stepName(names, c);
  const step =
    c.step_id !== undefined ? ` step ${c.step_id}${name !== undefined ? ` ${JSON.stringify(name)}` : ""}` : "";
  return `rule ${c.rule}, instance ${c.instance_id}, ${c.kind}${step}`;
}

function describeChange(o: ChangeOutcome, names: PlanNames): string {
  return `${changeWords(o.change, names)}: ${o.reason ?? "no reason recorded"}`;
}

export function requestLine(stats: RequestStats): string {
  const e = stats.byEndpoint;
  const posts = e.completeStep.ok + e.completeStep.failed + e.bulkAbort.ok + e.bulkAbort.failed;
  const extras = [
    stats.retries ? plural(stats.retries, "retry", "retries") : "",
    stats.rateLimited ? `${stats.rateLimited} answered 429` : "",
    stats.outcomeUnknown ? `${stats.outcomeUnknown} with unknown outcome, decided by reading` : "",
  ].filter(Boolean);
  return `Requests: ${stats.total} (${stats.total - posts} GET, ${posts} POST${extras.length ? `; ${extras.join(", ")}` : ""})`;
}

/** When each staleness check ran (all of them in the journal; here the first ones and the last, so it stays short). */
function checksLine(checks: StalenessCheck[]): string {
  const time = (c: StalenessCheck): string => `${c.at.slice(11, 19)}${c.stale ? ` (${c.stale} stale)` : ""}`;
  const SHOWN = 12;
  const list =
    checks.length <= SHOWN
      ? checks.map(time).join(", ")
      : `${checks
          .slice(0, SHOWN - 1)
          .map(time)
          .join(", ")}, … ${time(checks[checks.length - 1] as StalenessCheck)}`;
  return `Staleness checks: ${checks.length} (UTC ${list})`;
}

export function renderSummary(s: SummaryInput): string {
  const c = countOutcomes(s.outcomes);
  const total = s.outcomes.length;
  const names = s.plan ? namesOf(s.plan) : NO_NAMES;
  const lines: string[] = [];
  const problems = c.stale + c.failed + c.not_acted + c.not_started;
  const head = [`${plural(c.applied, "change")} applied`];
  if (c.already_done) head.push(`${c.already_done} already applied by an earlier run`);
  if (c.stale) head.push(`${c.stale} stale`);
  if (c.failed) head.push(`${c.failed} failed`);
  head.push(...notActedHead(s.outcomes));
  if (c.not_started) head.push(`${c.not_started} not started`);
  if (c.deferred) head.push(`${c.deferred} deferred`);
  const state =
    problems > 0 ? "incomplete" : c.deferred > 0 ? (s.stopped ? "stopped" : "stopped at its time limit") : "complete";
  lines.push(`Apply ${state}: ${head.join(", ")} (of ${plural(total, "planned change")}).`);

  const kinds = MUTATING_KINDS.filter((k) => s.outcomes.some((o) => o.change.kind === k));
  const columns = COLUMNS.filter((col) => col.status === "applied" || c[col.status] > 0);
  if (kinds.length > 0) {
    const rows = [["", ...columns.map((col) => col.title)]];
    for (const k of kinds) {
      const mine = s.outcomes.filter((o) => o.change.kind === k);
      rows.push([k, ...columns.map((col) => String(mine.filter((o) => o.status === col.status).length))]);
    }
    lines.push(...countTable(rows).map((l) => `  ${l}`));
  }
  // what this run changed, one line each, as watch cycles print theirs
  lines.push(...appliedLines(s.outcomes, names, { where: `the journal ${s.journalFile}`, order: inPlanOrder(s.plan) }));
  for (const [title, list] of SECTIONS.flatMap((section) => sections(s.outcomes, section))) {
    if (list.length === 0) continue;
    lines.push(title);
    for (const o of list) lines.push(`  - ${describeChange(o, names)}`);
  }
  if (c.deferred > 0) {
    // listed by count only: a bounded run of a large backlog defers thousands, all in the journal
    const before = s.stopped
      ? "the run was stopped"
      : s.maxDuration
        ? `--max-duration ${s.maxDuration}`
        : "the time limit";
    lines.push(
      `Deferred: ${plural(c.deferred, "change")} not started before ${before}; run the same apply again to resume them from the journal.`,
    );
  }
  lines.push(requestLine(s.stats));
  if (s.listedAsChanged > 0 || s.readToCheck > 0) {
    lines.push(
      `Staleness: ${plural(s.listedAsChanged, "instance")} changed since the plan in its workflows, ${s.readToCheck} read to check`,
    );
  }
  if (s.checks && s.checks.length > 0) lines.push(checksLine(s.checks));
  lines.push(`Plan: ${s.planFile}`);
  lines.push(`Journal: ${s.journalFile}`);
  return textSafeLines(`${lines.join("\n")}\n`);
}

/** The text view: the summary (and the audit line), or the one line saying there was nothing to send. */
export function applyText(r: ApplyReport): string {
  const n = r.audit.length;
  // the reason is already on stderr, as one line: the text output adds nothing
  if (r.kind === "not_applied") return "";
  if (r.kind === "nothing")
    return `Nothing to apply: the rules plan no changes${n > 0 ? ` (${n} in audit, never sent)` : ""}.\n`;
  const summary = renderSummary(r);
  return n > 0 ? `${summary}Audit: ${plural(n, "change")} of rules in audit mode not sent\n` : summary;
}
