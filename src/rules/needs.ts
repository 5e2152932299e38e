/** What a rule reads beyond the list element: the engine hydrates exactly this (docs/design.md, "Performance model"). */
import type { RuleNeeds } from "./types.js";
import type { ExprRefs } from "./ast-refs.js";
import { LIST_ELEMENT_KEYS } from "./ast-refs.js";

/** Keys an action reads (a report's columns and group_by) available from the list element without the record. */
function keyFromListElement(key: string): boolean {
  return (LIST_ELEMENT_KEYS as readonly string[]).includes(key);
}

/**
 * `recordKeys` are the keys the rule's actions read as they are (`fields.<alias>` or record keys: a kind's
 * `recordKeys`). The fields come out in declaration order, so the result is stable.
 */
export function computeNeeds(aliases: readonly string[], exprs: readonly ExprRefs[], recordKeys: readonly string[]): RuleNeeds {
  const read = new Set<string>();
  let all = false;
  let record = false;
  let times = false;
  for (const r of exprs) {
    times ||= r.waiting.length > 0;
    for (const f of r.fields) read.add(f.name);
    all ||= r.allFields;
    record ||= r.record;
  }
  for (const k of recordKeys) {
    if (k.startsWith("fields.")) read.add(k.slice("fields.".length));
    else if (!keyFromListElement(k)) record = true;
  }
  const fields = aliases.filter((a) => all || read.has(a));
  return { fields, record, ...(times ? { times: true as const } : {}) };
}
