/**
 * What `flowrules watch` asks the service between cycles, and how a cycle is narrowed to what changed
 * (docs/watch.md).
 *
 * Bookmarks are instants of the service's own clock (a record's `last_updated_time`), never ours, so no clock-skew
 * margin is needed to compare with them: per workflow, the newest update flowrules has seen. A poll is one list per
 * workflow (`last_updated_time_after` the bookmark, newest first, one element): empty means nothing changed.
 *
 * An instance can only start or stop matching a rule without a time condition when it is updated, and every update
 * moves `last_updated_time`: when no poll finds an update, such rules have nothing new to do. Rules whose meaning
 * moves with time (relative or `now` dates, time in conditions or templates, active windows) also get a cycle when
 * their window opens and every few minutes (src/watch/loop.ts).
 */
import { MAX_PAGE_SIZE, type ApiClient } from "../api/index.js";
import type { CompiledRule } from "../rules/types.js";
import { DATE_TIME_PARAMS } from "../rules/datetime.js";

export interface Newest {
  id: number;
  /** its last_updated_time, from the service */
  last_updated_time: string;
  /**
   * every instance updated since the bookmark is one the watcher itself wrote, and the newest still shows the time
   * its write left: nothing for a cycle to do (the watcher's own apply is not an update to react to)
   */
  ours?: boolean;
}

/** The watcher's own writes of a workflow since its bookmark: instance → the last_updated_time our write's answer gave (null: a bulk abort, which gives none). */
export type OwnWrites = ReadonlyMap<number, string | null>;

/**
 * The newest update of a workflow's instances strictly after `after` (all when undefined): one list of one element, newest
 * first, and one read of it for its time. Undefined when nothing was updated after it. With the watcher's own
 * writes since the bookmark, the list holds one more element than they are many, to tell them from anyone else's
 * update; an edit by someone else of an instance we wrote, made before our newest write, cannot be told from our
 * own write there (docs/watch.md): the next cycle's state sees it, the poll does not.
 */
export async function newestUpdate(
  client: ApiClient,
  processId: number,
  after: string | undefined,
  own?: OwnWrites,
): Promise<Newest | undefined> {
  // the service's `_after` filters are inclusive (the sandbox's are, docs/service.md): strictly after the bookmark is
  // a millisecond later, the resolution of the times we keep
  const strictlyAfter = after === undefined ? undefined : new Date(Date.parse(after) + 1).toISOString();
  const mine = own && own.size > 0 && own.size < MAX_PAGE_SIZE ? own : undefined;
  const query = {
    ordering: "-last_updated_time",
    page_size: mine ? mine.size + 1 : 1,
    ...(strictlyAfter ? { last_updated_time_after: strictlyAfter } : {}),
  };
  for await (const page of client.instancePages(processId, query)) {
    const first = page.results[0];
    if (!first) return undefined;
    const record = await client.getInstance(first.id);
    // an instance never updated since its start has no last_updated_time: its start stands in
    const t = record.last_updated_time ?? record.started_time;
    if (!t) return undefined;
    const newest = { id: first.id, last_updated_time: new Date(t).toISOString() };
    if (mine && page.next === null && page.results.every((i) => mine.has(i.id))) {
      const wrote = mine.get(first.id);
      if (wrote === null || (wrote !== undefined && wrote === record.last_updated_time))
        return { ...newest, ours: true };
    }
    return newest;
  }
  return undefined;
}

/** Whether what a rule selects or decides moves with time alone, without any update of the instances. */
export function timeDependent(rule: CompiledRule): boolean {
  if (rule.active) return true;
  for (const [key, value] of Object.entries(rule.select)) {
    if (DATE_TIME_PARAMS.includes(key) && typeof value === "string" && (value === "now" || /^[+-]P/.test(value.trim())))
      return true;
  }
  // conditions and templates: any reading of the clock ($now(), now, $millis(), the helpers)
  const text = JSON.stringify({ when: rule.when?.source ?? "", actions: rule.actions });
  return /\bnow\b|\$millis|daysSince|hoursUntil|waiting(Since|Days|Hours)/.test(text);
}
