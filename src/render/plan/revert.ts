/** What a revert plan (`flowrules revert`, docs/forecast.md) could not undo, as lines every plan view shows. */
import type { Plan, RevertNote } from "../../plan/types.js";

function noteLine(n: RevertNote, safe: (s: string) => string): string {
  const who = `#${n.instance_id}${n.instance_name !== undefined ? ` "${safe(n.instance_name)}"` : ""}`;
  const what = `${safe(n.kind)}${n.step_id !== undefined ? ` step ${n.step_id}` : ""}${n.field !== undefined ? ` ${safe(n.field)}` : ""}`;
  return `  ${who}: ${what} (${safe(n.rule)}): ${safe(n.reason)}`;
}

export function revertLines(plan: Plan, safe: (s: string) => string): string[] {
  const r = plan.revert;
  if (!r) return [];
  const out = [
    `Revert of ${safe(r.source)} (${r.source_digest}): sets back what its saves wrote where the field still holds it.`,
  ];
  if (r.not_reversible.length > 0)
    out.push(
      `Not reversible (${r.not_reversible.length}), for a person to act on:`,
      ...r.not_reversible.map((n) => noteLine(n, safe)),
    );
  if (r.left.length > 0) out.push(`Left as they are (${r.left.length}):`, ...r.left.map((n) => noteLine(n, safe)));
  return out;
}
