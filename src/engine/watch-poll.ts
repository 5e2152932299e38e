/**
 * What `flowrules watch` asks the service between cycles, and how a cycle is narrowed to what changed
 * (DESIGN.md section 11, second part; docs/watch.md).
 *
 * Bookmarks are instants of the service's own clock (a record's `last_updated_time`), never ours, so no clock-skew
 * margin is needed to compare with them: per workflow, the newest update flowrules has seen. A poll is one list per
 * workflow (`last_updated_time_after` the bookmark, newest first, one element): empty means nothing changed.
 *
 * A cycle triggered by a poll plans each rule of the changed workflows over its own selection narrowed to the
 * instances updated since the bookmark (minus a small lookback for late commits): an instance can only start or stop
 * matching a rule without a time condition when it is updated, and every update moves `last_updated_time`. Rules
 * whose meaning moves with time (relative or `now` dates, time in conditions or templates, active windows) are
 * planned in full when their window opens and at least every `fullEveryMs`.
 */
import type { ApiClient } from "../api/index.js";
import type { CompiledRule, RuleSet } from "../rules/types.js";
import { DATE_TIME_PARAMS, resolveDateTime } from "../rules/datetime.js";

/** Late commits: an update stamped a moment before the bookmark but listed only after it (docs/watch.md). */
export const LOOKBACK_MS = 2_000;

export interface Newest {
  id: number;
  /** its last_updated_time, from the service */
  last_updated_time: string;
}

/**
 * The newest update of a workflow's instances strictly after `after` (all when undefined): one list of one element, newest
 * first, and one read of it for its time. Undefined when nothing was updated after it.
 */
export async function newestUpdate(client: ApiClient, processId: number, after: string | undefined): Promise<Newest | undefined> {
  // the service's `_after` filters are inclusive (the sandbox's are, docs/service.md): strictly after the bookmark is
  // a millisecond later, the resolution of the times we keep
  const strictlyAfter = after === undefined ? undefined : new Date(Date.parse(after) + 1).toISOString();
  const query = { ordering: "-last_updated_time", page_size: 1, ...(strictlyAfter ? { last_updated_time_after: strictlyAfter } : {}) };
  for await (const page of client.instancePages(processId, query)) {
    const first = page.results[0];
    if (!first) return undefined;
    const record = await client.getInstance(first.id);
    // an instance never updated since its start has no last_updated_time: its start stands in
    const t = record.last_updated_time ?? record.started_time;
    return t ? { id: first.id, last_updated_time: new Date(t).toISOString() } : undefined;
  }
  return undefined;
}

/** Whether what a rule selects or decides moves with time alone, without any update of the instances. */
export function timeDependent(rule: CompiledRule): boolean {
  if (rule.active) return true;
  for (const [key, value] of Object.entries(rule.select)) {
    if (DATE_TIME_PARAMS.includes(key) && typeof value === "string" && (value === "now" || /^[+-]P/.test(value.trim()))) return true;
  }
  // conditions and templates: any reading of the clock ($now(), now, $millis(), the helpers)
  const text = JSON.stringify({ when: rule.when?.source ?? "", actions: rule.actions });
  return /\bnow\b|\$millis|daysSince|hoursUntil/.test(text);
}

/**
 * The rule set of one cycle: rules in `full` as written; rules of a workflow in `since` narrowed to the instances
 * updated after that instant (minus the lookback); the others left out.
 */
export function cycleRuleSet(
  ruleSet: RuleSet,
  workflowOf: (rule: CompiledRule) => number | undefined,
  full: ReadonlySet<string>,
  since: ReadonlyMap<number, string>,
  now: Date,
): RuleSet {
  const rules: CompiledRule[] = [];
  for (const rule of ruleSet.rules) {
    if (full.has(rule.name)) {
      rules.push(rule);
      continue;
    }
    const pid = workflowOf(rule);
    const after = pid === undefined ? undefined : since.get(pid);
    if (after === undefined) continue;
    const from = new Date(Date.parse(after) - LOOKBACK_MS).toISOString();
    const own = rule.select.last_updated_time_after;
    const ownAt = typeof own === "string" ? resolveDateTime(own, now) : undefined;
    // both bounds hold: the later one is the narrower
    const bound = ownAt !== undefined && Date.parse(ownAt) > Date.parse(from) ? ownAt : from;
    rules.push({ ...rule, select: { ...rule.select, last_updated_time_after: bound } });
  }
  return { ...ruleSet, rules };
}
