/**
 * Questions of the StateClient (./client.ts) answered without a request because the run already knows the answer
 * (docs/performance.md, "A busy tenant"): a watcher's cycle that handles a few changed instances should cost what
 * reading them costs, not a fixed toll of lists per rule. Each is reasoning the state's rule already allows
 * (src/state/README.md, "Why an answer still holds"); the equality property test covers them
 * (test/state/equality.test.ts). Functions run with the client as `this`.
 *
 * - a list this run built (a slice of a selection) is asked once a run: two selections of a rule narrowed to the
 *   same changed instances (a rule's own and the plan's look at what was updated recently) share it;
 * - a leaving slice (an `_after` bound moved later) is not asked when no cached member can be in it: none is left,
 *   or every one's `last_updated_time` is known from a record the last run kept and that did not change since;
 * - the structure probe's question (the newest started instance) is the census's: its page answers it; in another
 *   workflow, the last run's answer still holds when every instance changed since started before the last run
 *   looked (a record of it, read this run or kept, says when: a start time never changes) and the newest is not
 *   among them: the instances are the ones it ordered, none of them newer;
 * - the changes listing of a workflow is the one a watcher's poll asked just before the run (listed from the same
 *   instant or earlier), when it is handed one: the run is then a run that began with that listing.
 */
import type { InstanceListItem, InstanceRecord, Page } from "../api/index.js";
import type { CanonicalQuery, Slice } from "./bounds.js";
import type { ListingRef } from "./reader.js";
import { canonicalQuery } from "./bounds.js";
import { CENSUS_QUERY } from "./back.js";
import type { WorkflowMark } from "./schema.js";
import { count, iso, type RunWorkflow, type StateRun } from "./run.js";
import { statusOf } from "../actions/instance.js";

/** A list this run built, asked once a run whatever its page size (a list is read to its last page). */
export function listOnce(
  this: StateRun,
  processId: number,
  slice: CanonicalQuery,
  counted: () => void,
  derive?: () => Promise<InstanceListItem[] | undefined>,
): Promise<InstanceListItem[]> {
  // by its parameters in name order (a slice adds its bound last), less the page size
  const question = Object.entries(slice)
    .filter(([k]) => k !== "page_size")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const key = `${processId}:${JSON.stringify(question)}`;
  let p = this.sliceLists.get(key);
  if (!p) {
    p = (async () => {
      // the run knows the answer already (changedByRecords): the same one whoever asks it again this run
      const known = await derive?.();
      if (known) return known;
      const out: InstanceListItem[] = [];
      for await (const page of this.service.instancePages(processId, slice)) {
        counted();
        out.push(...page.results);
      }
      return out;
    })();
    // a failure is not remembered: asked again, it is asked of the service again
    p.catch(() => this.sliceLists.delete(key));
    this.sliceLists.set(key, p);
  }
  return p;
}

/** Members of a cached listing decided from their records at most; a larger one asks its leaving slice. */
const MAX_DECIDED = 200;

/** Record flags a kept record may have been read with; any of them gives the instance's last_updated_time. */
const FLAGS = ["", "v", "t", "vt"];

/**
 * The members a leaving slice takes out, decided from the kept records of instances that did not change since the
 * last run looked (their last_updated_time is the one read then); undefined when one is not known that way, or lies
 * within a millisecond of the range's ends (the service may keep microseconds), so the slice is asked.
 */
export async function leavingByRecords(
  this: StateRun,
  slice: Slice,
  members: { readonly size: number; keys(): Iterable<number> },
): Promise<Set<number> | undefined> {
  const range = slice.range;
  if (range === undefined || range.field !== "last_updated_time" || !this.prev) return undefined;
  // each member is a line read from the file: beyond a few, one request is cheaper
  if (members.size > MAX_DECIDED) return undefined;
  const gone = new Set<number>();
  for (const id of members.keys()) {
    let time: number | undefined;
    for (const f of FLAGS) {
      const ref = this.prev.records.get(`${id}:${f}`);
      // a record of our own write holds only once a listing shows it unchanged: not used here
      if (!ref || ref.written !== null) continue;
      const kept = await this.keptRecord(ref);
      const lut = kept?.record.last_updated_time;
      if (typeof lut === "string" && !Number.isNaN(Date.parse(lut))) {
        time = Date.parse(lut);
        break;
      }
    }
    if (time === undefined) return undefined;
    if (time > range.from + 1 && time < range.to - 1) gone.add(id);
    else if (!(time > range.to + 1)) return undefined; // at an end, or before the range: the service decides
  }
  return gone;
}

const CENSUS_KEY = JSON.stringify(canonicalQuery(CENSUS_QUERY));

/**
 * The service's pages for a question: for the census's question, the census's page first (asked this run, at the
 * start), then the service's from the second page on when the caller reads further.
 */
export async function* servicePages(
  this: StateRun,
  processId: number,
  q: CanonicalQuery,
  query: Parameters<StateRun["service"]["instancePages"]>[1],
): AsyncGenerator<Page<InstanceListItem>> {
  const census = JSON.stringify(q) === CENSUS_KEY ? this.censusPages.get(processId) : undefined;
  if (!census) return yield* this.service.instancePages(processId, query);
  yield census;
  if (census.next === null) return;
  let skip = 1;
  for await (const page of this.service.instancePages(processId, query)) {
    if (skip-- > 0) continue;
    yield page;
  }
}

/**
 * Whether the last run's answer to the structure probe's question (`ordering=-started_time`, one element) holds
 * although instances of the workflow changed: each changed one started before changes are listed from (so it was
 * there when the last run asked, and a start time never changes: its record, read this run or kept, says it), and
 * the newest the answer names is not one of them. The instances are then the same ones in the same order (an
 * instance started since is updated since, so it is among the changed ones), the newest the same and unchanged, the
 * count the same. A question of the census's workflow is answered by the census's page instead (fresher, free).
 */
export async function newestHolds(
  this: StateRun,
  w: RunWorkflow,
  q: CanonicalQuery,
  ref: ListingRef,
  changed: ReadonlySet<number>,
): Promise<boolean> {
  if (JSON.stringify(q) !== CENSUS_KEY || this.censusPages.has(w.pid)) return false;
  // each changed instance's start is looked up: beyond a few, one request is cheaper
  if (changed.size > MAX_DECIDED || ref.pages.length === 0) return false;
  const page = await this.readPage(ref, 0);
  const newest = page?.[0];
  if (!newest || page.length !== 1 || changed.has(newest.id)) return false;
  const from = this.since(w).at;
  const polled = new Map<number, InstanceRecord>();
  for (const r of this.opts.listed?.get(w.pid)?.records ?? []) polled.set(r.id, r);
  for (const id of changed) {
    const started = await startedMs.call(this, id, polled.get(id));
    // within a millisecond of the bound (the service may keep microseconds), or not known: the service decides
    if (started === undefined || !(started < from - 1)) return false;
  }
  this.opts.explain?.({
    subject: "the newest started instance (the structure probe)",
    workflow_id: w.pid,
    choice: "state",
    requests: 0,
    why: `${count(changed.size, "changed instance")} all started before ${iso(from)}, the newest started (${newest.id}) not among them: the last run's answer`,
  });
  return true;
}

/** When an instance started, from a record: the poll's, one this run read with values, or one the last run kept. */
async function startedMs(this: StateRun, id: number, polled: InstanceRecord | undefined): Promise<number | undefined> {
  const read = polled ?? (await this.valueRecords.get(id)?.catch(() => undefined));
  const own = timeOf(read?.started_time);
  if (own !== undefined || !this.prev) return own;
  for (const f of FLAGS) {
    const ref = this.prev.records.get(`${id}:${f}`);
    if (!ref) continue;
    // a start time never changes: a record of a changed instance (our own write's answer too) still says it
    const kept = await this.keptRecord(ref);
    const t = kept?.record.id === id ? timeOf(kept.record.started_time) : undefined;
    if (t !== undefined) return t;
  }
  return undefined;
}

function timeOf(v: string | null | undefined): number | undefined {
  if (typeof v !== "string") return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** The parameters of a changed slice decided from records: what a list element and a record show as the service. */
const DECIDED_KEYS = new Set(["status", "active_step_id", "tags", "priority", "page_size", "last_updated_time_after"]);

/**
 * A selection's changed slice (its question narrowed to instances updated since changes are listed from: the changed
 * instances it holds now) decided without a request: every changed instance has a record read this run (the
 * watcher's poll read it after its listing, or the plan did), which says its steps, tags, priority and time, and an
 * element of the changes listing that agrees with it (name, status, public_url). An instance changed after that
 * listing is listed as changed by the next run, as with any question this run answers. Undefined (the slice is asked)
 * for another question, a changed instance without a record, or a time within a millisecond of the bound.
 */
export async function changedByRecords(
  this: StateRun,
  w: RunWorkflow,
  slice: CanonicalQuery,
): Promise<InstanceListItem[] | undefined> {
  const items = w.changedItems;
  const changed = w.changedSet;
  if (!items || !changed || changed.size > MAX_DECIDED) return undefined;
  if (Object.keys(slice).some((k) => !DECIDED_KEYS.has(k))) return undefined;
  const statuses = slice.status === undefined ? undefined : [slice.status].flat().map(String);
  const step = slice.active_step_id === undefined ? undefined : Number(slice.active_step_id);
  const tags = slice.tags === undefined ? undefined : [slice.tags].flat().map(String);
  // several tags: whether the service wants any or all of them is not said (docs/service.md): asked
  if (tags && tags.length !== 1) return undefined;
  if (step !== undefined && !Number.isSafeInteger(step)) return undefined;
  const priority = slice.priority === undefined ? undefined : String(slice.priority);
  if (priority !== undefined && priority !== "H" && priority !== "V") return undefined;
  const bound = timeOf(typeof slice.last_updated_time_after === "string" ? slice.last_updated_time_after : undefined);
  if (bound === undefined) return undefined;
  const polled = new Map<number, InstanceRecord>();
  for (const r of this.opts.listed?.get(w.pid)?.records ?? []) polled.set(r.id, r);
  const out: InstanceListItem[] = [];
  for (const id of changed) {
    const item = items.get(id);
    const record = polled.get(id) ?? (await this.valueRecords.get(id)?.catch(() => undefined));
    if (!item || !record || record.id !== id) return undefined;
    // the element and the record show one instance as it was: else it changed in between, and the service decides
    if ((record.name ?? "") !== item.name || statusOf(record) !== item.status) return undefined;
    if ((record.public_url ?? null) !== (item.public_url ?? null)) return undefined;
    const t = timeOf(record.last_updated_time ?? record.started_time);
    if (t === undefined || Math.abs(t - bound) <= 1) return undefined;
    if (t < bound) continue;
    if (statuses && !statuses.includes(item.status)) continue;
    if (step !== undefined && !(record.active_step_ids ?? []).includes(step)) continue;
    if (tags && !(record.tags ?? []).includes(tags[0] as string)) continue;
    if (priority !== undefined && record.priority !== priority) continue;
    out.push(item);
  }
  this.opts.explain?.({
    subject: `changed instances of ${JSON.stringify(slice)}`,
    workflow_id: w.pid,
    choice: "state",
    requests: 0,
    why: `${count(changed.size, "changed instance")}, each with a record read this run: ${out.length} in it, decided from the records`,
  });
  return out.sort((a, b) => a.id - b.id);
}

/**
 * From when changes are listed: when the last run looked, by the service's clock, less the margin for late commits;
 * without it (an answer of that run carried no Date), the last run's now by our clock less the lookback for skew.
 * A changes listing handed to the run (a watcher's poll) from that instant or earlier is the run's: listing from
 * earlier only names more instances as changed, as a wider margin would, and every use of the bound (the changed
 * ids, the changed slices of selections, the questions of what was updated later) takes this one bound.
 */
export function since(this: StateRun, w: RunWorkflow): { at: number; why: string } {
  const mark = w.mark as WorkflowMark;
  const looked = mark.looked_at ? Date.parse(mark.looked_at) : Number.NaN;
  const own = !Number.isNaN(looked)
    ? {
        at: looked - this.opts.marginMs,
        why: `when the last run looked, by the service's clock, less ${Math.round(this.opts.marginMs / 1000)} s for late commits`,
      }
    : {
        at: Date.parse(mark.run_at) - this.opts.lookbackMs,
        why: `the last run, by this machine's clock (the service sent no Date), less ${Math.round(this.opts.lookbackMs / 1000)} s for clock skew`,
      };
  const listed = this.opts.listed?.get(w.pid);
  const from = listed ? Date.parse(listed.after) : Number.NaN;
  if (Number.isNaN(from) || from > own.at) return own;
  return { at: from, why: `the watcher's poll, just before this run, listed from then (${own.why}: ${iso(own.at)})` };
}

/** Ids of the workflow's instances updated since the last run looked: one listing per run, or the poll's. */
export function changedIds(this: StateRun, w: RunWorkflow): Promise<ReadonlySet<number>> {
  w.changed ??= (async () => {
    const from = this.since(w);
    const listed = this.opts.listed?.get(w.pid);
    const shared = listed !== undefined && Date.parse(listed.after) === from.at;
    const ids = new Set<number>(shared ? listed.ids : []);
    const items = new Map<number, InstanceListItem>();
    for (const i of shared ? (listed.items ?? []) : []) items.set(i.id, i);
    let pages = 0;
    if (!shared)
      for await (const page of this.service.instancePages(w.pid, { last_updated_time_after: iso(from.at) })) {
        pages++;
        for (const i of page.results) {
          ids.add(i.id);
          items.set(i.id, i);
        }
      }
    w.changedSet = ids;
    if (items.size === ids.size) w.changedItems = items;
    let ours = 0;
    for (const id of ids)
      if (
        this.prev?.aborted.has(id) ||
        this.prev?.records.get(`${id}:v`)?.written ||
        this.prev?.records.get(`${id}:vt`)?.written
      )
        ours++;
    this.opts.explain?.({
      subject: "changes since the last run",
      workflow_id: w.pid,
      choice: shared ? "state" : "list",
      requests: pages,
      why: `${count(ids.size, "instance")} updated since ${iso(from.at)} (${from.why})${ours > 0 ? `, ${ours} of them by this flowrules' own writes` : ""}${shared ? ": the watcher's poll listed them" : ""}`,
    });
    return ids;
  })();
  return w.changed;
}
