/**
 * `plan --changed-since`: narrows the rule set to the rules added or edited since the ref, and records the
 * comparison in the plan — `changed_since` and `removed_rules` in the JSON plan (added keys; the contract's keys are
 * untouched), a note in the text and Markdown outputs so a reviewer sees what the change itself does.
 */
import type { Plan } from "../plan/types.js";
import { PLAN_FORMATS, type PlanFormat, type PlanRenderOptions } from "../render/plan/index.js";
import { MARKDOWN_LIMIT } from "../render/plan/markdown.js";
import type { RuleSet } from "../rules/types.js";
import { ruleSelection } from "../rules/index.js";
import type { ChangedSince } from "./changed-since.js";

export interface ChangedSincePlanKeys {
  changed_since: { ref: string; commit: string; added: string[]; changed: string[]; unchanged: string[] };
  /** rules defined at the ref and no longer: nothing is planned for them, they are listed for the reviewer */
  removed_rules: Array<{ name: string; file: string }>;
}

export type PlanWithChanges = Plan & ChangedSincePlanKeys;

/** `only` is the --rule filter (names or globs): when given, the comparison is narrowed to those names too. */
function narrowed(c: ChangedSince, only: string[]): ChangedSince {
  if (only.length === 0) return c;
  const keep = ruleSelection(only).selects;
  return { ...c, added: c.added.filter(keep), changed: c.changed.filter(keep), unchanged: c.unchanged.filter(keep), removed: c.removed.filter((r) => keep(r.name)) };
}

export function changedRuleSet(ruleSet: RuleSet, c: ChangedSince): RuleSet {
  const plan = new Set([...c.added, ...c.changed]);
  return { ...ruleSet, rules: ruleSet.rules.filter((r) => plan.has(r.name)) };
}

export function withChangedSince(plan: Plan, changes: ChangedSince, only: string[] = []): PlanWithChanges {
  const c = narrowed(changes, only);
  return {
    ...plan,
    changed_since: { ref: c.ref, commit: c.commit, added: c.added, changed: c.changed, unchanged: c.unchanged },
    removed_rules: c.removed,
  };
}

const names = (list: string[]): string => list.join(", ");

function headline(c: ChangedSincePlanKeys["changed_since"], code: (s: string) => string): string {
  const planned = c.added.length + c.changed.length;
  const parts: string[] = [];
  if (c.added.length > 0) parts.push(`added ${names(c.added.map(code))}`);
  if (c.changed.length > 0) parts.push(`edited ${names(c.changed.map(code))}`);
  const what = planned === 0 ? "no rule was added or edited" : `${planned} ${planned === 1 ? "rule" : "rules"} planned (${parts.join("; ")})`;
  const rest = c.unchanged.length > 0 ? `; ${c.unchanged.length} unchanged ${c.unchanged.length === 1 ? "rule" : "rules"} not planned` : "";
  return `Changed since ${code(c.ref)} (${c.commit.slice(0, 12)}): ${what}${rest}.`;
}

/** Text output: the note goes just above the closing summary line. */
export function decorateText(output: string, plan: PlanWithChanges): string {
  const note = [headline(plan.changed_since, (s) => s)];
  if (plan.removed_rules.length > 0) {
    note.push(`Removed rules (no longer defined, nothing planned for them):`);
    for (const r of plan.removed_rules) note.push(`  - ${r.name} (was in ${r.file})`);
  }
  const lines = output.replace(/\n$/, "").split("\n");
  const summary = lines.pop() ?? "";
  return `${[...lines, ...note, "", summary].join("\n")}\n`;
}

function markdownNote(plan: PlanWithChanges): string {
  const code = (s: string): string => `\`${s.replace(/`/g, "'")}\``;
  const note = [`> ${headline(plan.changed_since, code)}`];
  if (plan.removed_rules.length > 0) {
    note.push("", `**Removed rules** (no longer defined, nothing planned for them):`, "");
    for (const r of plan.removed_rules) note.push(`- ${code(r.name)} (was in ${code(r.file)})`);
  }
  return `${note.join("\n")}\n\n`;
}

/** Markdown output: the note goes right under the heading, outside any collapsed block, where reviewers look first. */
export function decorateMarkdown(output: string, note: string): string {
  const heading = /^## [^\n]*\n\n/.exec(output);
  return heading ? output.slice(0, heading[0].length) + note + output.slice(heading[0].length) : note + output;
}

export function isPlanWithChanges(plan: Plan): plan is PlanWithChanges {
  return "changed_since" in plan && "removed_rules" in plan;
}

/**
 * Renders a plan in any format, adding the changed-since note when the plan has one. The Markdown body is given
 * that much less room, so the whole comment still fits the limit.
 */
export function renderPlanOutput(format: PlanFormat, plan: Plan, options: PlanRenderOptions): string {
  if (!isPlanWithChanges(plan)) return PLAN_FORMATS[format](plan, options);
  if (format === "text") return decorateText(PLAN_FORMATS.text(plan, options), plan);
  if (format === "markdown") {
    const note = markdownNote(plan);
    const maxChars = (options.maxChars ?? MARKDOWN_LIMIT) - note.length;
    return decorateMarkdown(PLAN_FORMATS.markdown(plan, { ...options, maxChars }), note);
  }
  return PLAN_FORMATS[format](plan, options);
}
