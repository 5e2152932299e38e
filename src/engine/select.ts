/**
 * `select` → query parameters of the v2 instance list (docs/service.md, "List instances"). Keys are already the service's parameter names;
 * relative date-times are resolved once against the plan's start so every page of a plan asks the same question.
 */
import { actionKind } from "../actions/index.js";
import type { CompiledRule, SelectSpec } from "../rules/types.js";
import { DATE_TIME_PARAMS, resolveDateTime } from "../rules/datetime.js";

export type ListQuery = Record<string, string | number | boolean | Array<string | number>>;

const DATE_TIME = new Set(DATE_TIME_PARAMS);

export function selectQuery(select: SelectSpec, now: Date): ListQuery {
  const query: ListQuery = {};
  for (const [key, value] of Object.entries(select)) {
    if (DATE_TIME.has(key) && typeof value === "string") query[key] = resolveDateTime(value, now);
    else if (key === "status" && typeof value === "string") query[key] = [value];
    else query[key] = value;
  }
  return query;
}

/** The step a rule's selection guarantees active (`active_step_id` of the instance list), if any. */
export function selectedActiveStep(select: SelectSpec): number | undefined {
  const v = select.active_step_id;
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^\d+$/.test(v)) return Number(v);
  return undefined;
}

/**
 * Steps the rule acts on whose activity its selection does not guarantee. Unless the full record is read anyway, the
 * engine learns which selected instances have them active from the same selection filtered by `active_step_id`: a
 * few list pages instead of one read per instance.
 */
export function stepsToProbe(rule: CompiledRule): number[] {
  const active = selectedActiveStep(rule.select);
  const steps = rule.actions.flatMap((a) => {
    const kind = actionKind(a.kind);
    const target = kind.mutating ? kind.target(a) : "instance";
    return target !== "instance" && target.step !== active ? [target.step] : [];
  });
  return [...new Set(steps)];
}
