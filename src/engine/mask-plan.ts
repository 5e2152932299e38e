/**
 * The API key found in the service's data (an instance named with it, a field value holding it) is masked in what a
 * plan shows and stores: instance names, `before` values, report contents, error messages and the workflow, step and
 * field names beside ids. Request bodies and `after` are left as planned — they say what is sent,
 * and apply checks the two agree — so a template that copies such a value into a field still sends it, as the rule
 * says.
 */
import { replaceFolded } from "../api/errors.js";
import type { Plan } from "../plan/types.js";
import { isLazyRows, itemsMayHold, mapRows } from "../plan/lazy-rows.js";
import { isLazyChanges, mapChanges } from "../plan/lazy-changes.js";
import type { PlannedChange } from "../plan/types.js";
import { FoldedSearch } from "../text/folded-search.js";

export const KEY_MASK = "[redacted]";

function maskDeep(v: unknown, secret: string, hit: { n: number }): unknown {
  if (typeof v === "string") {
    // in any case: a service that upper-cases a name still holds the key
    const masked = replaceFolded(v, secret, KEY_MASK);
    if (masked !== v) hit.n++;
    return masked;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = maskDeep(v[i], secret, hit);
    return v;
  }
  if (typeof v === "object" && v !== null) {
    const rec = v as Record<string, unknown>;
    for (const [k, x] of Object.entries(rec)) {
      const masked = maskDeep(x, secret, hit);
      const key = replaceFolded(k, secret, KEY_MASK);
      if (key !== k) {
        delete rec[k];
        hit.n++;
      }
      rec[key] = masked;
    }
    return v;
  }
  return v;
}

/**
 * A report's rows masked: in place when they are objects; rows made as they are read (src/plan/lazy-rows.ts) are
 * counted now and masked as they are made, only when some holds the key.
 */
function maskRows(
  rows: Array<Record<string, unknown>>,
  secret: string,
  hit: { n: number },
  search: FoldedSearch,
): Array<Record<string, unknown>> {
  // rows that cannot hold the key (their texts searched as bytes) are not made to be looked at
  if (!itemsMayHold(rows, search)) return rows;
  const found = { n: 0 };
  for (let i = 0; i < rows.length; i++) maskDeep(rows[i], secret, found);
  hit.n += found.n;
  if (found.n === 0 || !isLazyRows(rows)) return rows;
  return mapRows(rows, (row) => maskDeep(row, secret, { n: 0 }) as Record<string, unknown>);
}

/** A change's instance name and `before` masked, in place. */
function maskChange(c: PlannedChange, secret: string, hit: { n: number }): PlannedChange {
  const name = replaceFolded(c.instance_name, secret, KEY_MASK);
  if (name !== c.instance_name) {
    c.instance_name = name;
    hit.n++;
  }
  maskDeep(c.before, secret, hit);
  return c;
}

/** Masks the key in the plan's shown data, in place; returns how many values held it. */
export function maskKeyInPlan(plan: Plan, secret: string): number {
  // a very short "key" would mask ordinary text everywhere (src/log/redact.ts keeps the same floor)
  if (secret.length < 4) return 0;
  const hit = { n: 0 };
  const found = { n: 0 };
  // the key as replaceFolded finds it: changes that cannot hold it (their texts searched as bytes) are not made
  const search = new FoldedSearch(secret);
  if (itemsMayHold(plan.changes, search)) for (const c of plan.changes) maskChange(c, secret, found);
  hit.n += found.n;
  // changes made as they are read (src/plan/lazy-changes.ts) are masked as they are made, only when some holds the key
  if (found.n > 0 && isLazyChanges(plan.changes))
    plan.changes = mapChanges(plan.changes, (c) => maskChange(c, secret, { n: 0 }), true);
  for (const report of plan.reports) {
    const { rows } = report;
    report.rows = [];
    maskDeep(report, secret, hit);
    report.rows = maskRows(rows, secret, hit, search);
  }
  maskDeep(plan.errors, secret, hit);
  // workflow, step and field names are the service's data too (rules[].workflow_name: the rule's own words)
  if (plan.names) maskDeep(plan.names, secret, hit);
  return hit.n;
}
