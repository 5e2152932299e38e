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
import { MAX_PAGE_SIZE, type ApiClient, type InstanceListItem, type InstanceRecord } from "../api/index.js";
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

/** A changes listing a poll asked for the next cycle's state (src/state/run.ts, ListedChanges). */
export interface Listed {
  after: string;
  ids: readonly number[];
  /** the listing's elements (the cycle's state answers a selection's changed slice from them and the records) */
  items?: readonly InstanceListItem[];
  lookedMs: number;
  /** the records read with values after the listing, for the cycle's state (src/state/records.ts) */
  records?: readonly InstanceRecord[];
}

/** A poll that also asked the workflow's changes listing for the cycle's state: its newest update, and the listing. */
export interface PolledChanges {
  newest: Newest | undefined;
  /** undefined when the listing cannot be handed over (more than one page, an answer without a Date) */
  listed: Listed | undefined;
}

/**
 * One workflow's poll. The first after a cycle (`from`: when the next cycle's state lists changes, as that cycle
 * left it) asks that listing (pollChanges); one that finds nothing new is `idle`: the workflow's polls ask one
 * element until the next cycle (the listing's older instances would cost a read at every poll).
 */
export async function pollWorkflow(
  client: ApiClient,
  processId: number,
  after: string | undefined,
  own: OwnWrites | undefined,
  from: string | undefined,
): Promise<{ newest: Newest | undefined; listed?: Listed; idle: boolean }> {
  const wide =
    after !== undefined && from !== undefined ? await pollChanges(client, processId, after, from, own) : undefined;
  if (!wide) return { newest: await newestUpdate(client, processId, after, own), idle: false };
  return { newest: wide.newest, ...(wide.listed ? { listed: wide.listed } : {}), idle: wide.newest === undefined };
}

/**
 * The poll as the changes listing of the next cycle's state (src/state/known.ts): every instance updated after `from`
 * (when the state lists changes from, or earlier: the bookmark's next millisecond when that is earlier), newest
 * first, 500 a page, and one read of the newest for its time; newer than the bookmark `after` is an update, as for
 * newestUpdate. The same request as a poll of one element, and the cycle's state asks no changes listing of its own.
 * Undefined without a bookmark or a service clock; then the caller polls as before.
 *
 * The watcher's own writes: the instances updated after the bookmark are the first ones listed, up to the newest
 * one not ours, whose time (one more read) tells whether it is after the bookmark.
 */
export async function pollChanges(
  client: ApiClient,
  processId: number,
  after: string,
  from: string,
  own?: OwnWrites,
): Promise<PolledChanges | undefined> {
  const bookmark = Date.parse(after);
  const before = client.serviceClock?.();
  if (Number.isNaN(bookmark) || !before) return undefined;
  // the service's `_after` filters are inclusive: the bookmark's next millisecond at the latest (as newestUpdate)
  const start = Math.min(Date.parse(from), bookmark + 1);
  if (Number.isNaN(start)) return undefined;
  const ids: number[] = [];
  const items: InstanceListItem[] = [];
  const records: InstanceRecord[] = [];
  let whole = true;
  const sent = Date.now();
  for await (const page of client.instancePages(processId, {
    ordering: "-last_updated_time",
    last_updated_time_after: new Date(start).toISOString(),
    page_size: MAX_PAGE_SIZE,
  })) {
    ids.push(...page.results.map((i) => i.id));
    items.push(...page.results);
    // a long list is the cycle's state's to read: the poll needs its first element only
    whole = page.next === null;
    break;
  }
  // the service's clock no later than the listing: the latest Date seen by now, less the time since it was sent (by
  // ours), as the client bounds a run's look (src/api/answers.ts); not with an answer that came without a Date
  const clock = client.serviceClock?.();
  const listed =
    whole && clock && clock.latestMs !== null && clock.undated === before.undated
      ? { after: new Date(start).toISOString(), ids, items, lookedMs: clock.latestMs - (Date.now() - sent), records }
      : undefined;
  const timeOf = async (id: number): Promise<{ raw: string | null | undefined; ms: number }> => {
    // with values: the cycle's state takes it as its own read (the plan reads a changed instance with values)
    const record = await client.getInstance(id, { injectValues: true });
    if (record.id === id) records.push(record);
    // an instance never updated since its start has no last_updated_time: its start stands in
    const t = record.last_updated_time ?? record.started_time;
    return { raw: record.last_updated_time, ms: t ? Date.parse(t) : Number.NaN };
  };
  const first = ids[0];
  if (first === undefined) return { newest: undefined, listed };
  const t = await timeOf(first);
  if (Number.isNaN(t.ms) || !(t.ms > bookmark)) return { newest: undefined, listed };
  const newest: Newest = { id: first, last_updated_time: new Date(t.ms).toISOString() };
  const wrote = own?.get(first);
  if (!own || !(wrote === null || (wrote !== undefined && wrote === t.raw))) return { newest, listed };
  // ours when every instance updated after the bookmark is: the first one listed not ours is not after it
  const other = ids.find((id) => !own.has(id));
  if (other === undefined) return { newest: whole ? { ...newest, ours: true } : newest, listed };
  const ot = await timeOf(other);
  return { newest: !Number.isNaN(ot.ms) && ot.ms <= bookmark ? { ...newest, ours: true } : newest, listed };
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
