/**
 * The changed-since note of `plan --changed-since REF` (docs/ci.md), in each medium: every plan view that shows a
 * plan's `changed_since` and `removed_rules` takes its words from here, and test/render/changed-since.test.ts holds
 * every format of the registry to showing them.
 */
import type { ChangedSinceNote, Plan, PlanChangedSince } from "../../plan/types.js";
import { plural } from "../../text/plural.js";

/** The plan's comparison with the ref, when it was planned with --changed-since. */
export function changedSinceOf(plan: Plan): PlanChangedSince | undefined {
  return plan.changed_since
    ? { changed_since: plan.changed_since, removed_rules: plan.removed_rules ?? [] }
    : undefined;
}

const names = (list: string[]): string => list.join(", ");

/** One sentence: what was planned of the rules and why; `code` marks names up for the medium. */
export function changedSinceHeadline(c: ChangedSinceNote, code: (s: string) => string): string {
  const planned = c.added.length + c.changed.length;
  const parts: string[] = [];
  if (c.added.length > 0) parts.push(`added ${names(c.added.map(code))}`);
  if (c.changed.length > 0) parts.push(`edited ${names(c.changed.map(code))}`);
  const what =
    planned === 0 ? "no rule was added or edited" : `${plural(planned, "rule")} planned (${parts.join("; ")})`;
  const rest = c.unchanged.length > 0 ? `; ${plural(c.unchanged.length, "unchanged rule")} not planned` : "";
  return `Changed since ${code(c.ref)} (${c.commit.slice(0, 12)}): ${what}${rest}.`;
}

export const REMOVED_HEADING = "Removed rules";
export const REMOVED_WHY = "(no longer defined, nothing planned for them)";
