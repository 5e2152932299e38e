/** The started times a rollout limit orders a rule's changes by, read as cheaply as they can be. */
import type { ApiClient } from "../api/index.js";
import type { CompiledRule } from "../rules/types.js";
import type { Almanac } from "./almanac.js";
import type { RuleResult } from "./assemble.js";
import { PAGE } from "./query-plan.js";
import type { RequestChoice } from "./run-queries.js";
import { selectQuery } from "./select.js";

export interface StartedTimesContext {
  client: ApiClient;
  almanac: Almanac;
  explain: (c: RequestChoice) => void;
  now: Date;
}

// a rollout limit plans the oldest instances first: their started_time, read only when the list element does not
// tell it, the rule has more changes than its limit, and no read of the record brought it
export async function learnStartedTimes(
  ctx: StartedTimesContext,
  rule: CompiledRule,
  result: RuleResult,
): Promise<void> {
  const { client, almanac, explain, now } = ctx;
  const limit = rule.limits.max_changes_per_run;
  if (limit === undefined || result.changes.length <= limit) return;
  const missing = [...new Set(result.changes.map((c) => c.instance_id))].filter((id) => !result.startedTimes.has(id));
  if (missing.length === 0) return;
  const processId = result.workflowId ?? 0;
  const why = `its rollout limit (${limit} a run) plans the oldest instances first`;
  const selected = result.selected;
  const pages = Math.max(1, Math.ceil(selected / PAGE));
  // over several workflows one listing cannot order them all: the records tell
  if (missing.length <= pages || result.workflowId === null) {
    explain({
      subject: `started times of ${rule.name}`,
      workflow_id: processId,
      choice: "record reads",
      requests: missing.length,
      why,
      rules: [rule.name],
    });
    const read = await Promise.all(missing.map((id) => almanac.records.get(id) ?? client.getInstance(id)));
    for (const record of read)
      if (typeof record.started_time === "string") result.startedTimes.set(record.id, record.started_time);
    return;
  }
  // fewer requests: the selection listed oldest first (4.2 ordering=started_time); its order stands for the times
  explain({
    subject: `started times of ${rule.name}`,
    workflow_id: processId,
    choice: "list ordered by started_time",
    requests: pages,
    why,
    rules: [rule.name],
  });
  // every instance with changes gets its rank, so known times and ranks are never compared with each other
  const want = new Set(result.changes.map((c) => c.instance_id));
  const ranks = new Map<number, string>();
  let rank = 0;
  for await (const page of client.instancePages(processId, {
    ...selectQuery(rule.select, now),
    ordering: "started_time",
  })) {
    for (const item of page.results) {
      rank += 1;
      // a rank as an instant: only the order matters, and the order is the service's by started_time
      if (want.has(item.id) && !ranks.has(item.id)) ranks.set(item.id, new Date(rank).toISOString());
    }
  }
  result.startedTimes = ranks;
}
