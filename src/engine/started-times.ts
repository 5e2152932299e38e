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
  const missing = [...new Set(result.changes.instanceIds())].filter((id) => !result.startedTimes.has(id));
  if (missing.length === 0) return;
  const processId = result.workflowId ?? 0;
  const why = `its rollout limit (${limit} a run) plans the oldest instances first`;
  const selected = result.selected;
  const pages = Math.max(1, Math.ceil(selected / PAGE));
  // over several workflows one listing cannot order them all: the records tell
  if (missing.length <= pages || result.workflowId === null) {
    const started = almanac.started.times;
    explain({
      subject: `started times of ${rule.name}`,
      workflow_id: processId,
      choice: "record reads",
      // a record this run read already (for another rule) costs nothing
      requests: missing.filter((id) => !started.has(id) && !almanac.records.has(id)).length,
      why,
      rules: [rule.name],
    });
    const read = await Promise.all(
      missing.map((id) => {
        let time = started.get(id);
        if (!time) {
          const record = almanac.records.get(id);
          time = record ? Promise.resolve(record.started_time) : client.getInstance(id).then((r) => r.started_time);
          started.set(id, time);
        }
        return time.then((t) => [id, t] as const);
      }),
    );
    for (const [id, t] of read) if (typeof t === "string") result.startedTimes.set(id, t);
    return;
  }
  // fewer requests: the selection listed oldest first (4.2 ordering=started_time); its order stands for the times
  const query = { ...selectQuery(rule.select, now), ordering: "started_time" };
  const key = `${processId}:${JSON.stringify(query)}`;
  const listings = almanac.started.listings;
  explain({
    subject: `started times of ${rule.name}`,
    workflow_id: processId,
    choice: "list ordered by started_time",
    // the same selection listed for another rule of this run serves this one
    requests: listings.has(key) ? 0 : pages,
    why,
    rules: [rule.name],
  });
  // every instance with changes gets its rank, so known times and ranks are never compared with each other
  const want = new Set(result.changes.instanceIds());
  let listed = listings.get(key);
  if (!listed) {
    listed = (async () => {
      const ids: number[] = [];
      for await (const page of client.instancePages(processId, query))
        for (const item of page.results) ids.push(item.id);
      return ids;
    })();
    listings.set(key, listed);
  }
  const ranks = new Map<number, string>();
  for (const [i, id] of (await listed).entries()) {
    // a rank as an instant: only the order matters, and the order is the service's by started_time
    if (want.has(id) && !ranks.has(id)) ranks.set(id, new Date(i + 1).toISOString());
  }
  result.startedTimes = ranks;
}
