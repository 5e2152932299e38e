/**
 * Why an instance matched a rule or not, in a few lines for a failing test: the select filters that failed, else the
 * clauses of `when` that decided, with the values of the fields the rule reads. Built from the same explanation
 * `flowrules explain` prints.
 */
import { decidingClauses, type RuleExplanation } from "../engine/explain/index.js";
import type { Said } from "./types.js";

export function whyLines(e: RuleExplanation): Said[] {
  const out: Said[] = [];
  if (!e.in_workflow) return [`instance is not in workflow ${e.workflow_id ?? "?"} of rule "${e.rule}"`];
  if (e.inactive) return [`rule "${e.rule}" is inactive: ${e.inactive}`];
  if (e.excluded) return [`instance is ${e.excluded}`];
  const failing = e.filters.filter((f) => f.result === "fail");
  if (failing.length > 0) {
    for (const f of failing) out.push([`select ${f.key} = `, { written: f.value }, ` does not hold: ${f.actual}`]);
    return out;
  }
  const deciding = e.when ? decidingClauses(e.when) : [];
  // the clause that failed to evaluate says it more precisely than the rule-level message
  if (e.error && !deciding.some((c) => c.error)) out.push(e.error);
  if (e.when) {
    for (const c of deciding)
      out.push(c.error ? `when ${c.source} → error: ${c.error}` : [`when ${c.source} → `, { value: c.value }]);
  } else {
    out.push("rule has no `when`: every selected instance matches");
  }
  if (e.fields.length > 0)
    out.push(e.fields.flatMap((f, i) => [`${i > 0 ? ", " : ""}fields.${f.alias} = `, { value: f.value }]));
  if (e.matched) for (const s of e.skipped) out.push(`skipped ${s}`);
  return out;
}
