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
 * - the structure probe's question (the newest started instance) is the census's: its page answers it.
 */
import type { InstanceListItem, Page } from "../api/index.js";
import type { CanonicalQuery, Slice } from "./bounds.js";
import { canonicalQuery } from "./bounds.js";
import { CENSUS_QUERY } from "./back.js";
import type { StateRun } from "./run.js";

/** A list this run built, asked once a run whatever its page size (a list is read to its last page). */
export function listOnce(
  this: StateRun,
  processId: number,
  slice: CanonicalQuery,
  counted: () => void,
): Promise<InstanceListItem[]> {
  // by its parameters in name order (a slice adds its bound last), less the page size
  const question = Object.entries(slice)
    .filter(([k]) => k !== "page_size")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const key = `${processId}:${JSON.stringify(question)}`;
  let p = this.sliceLists.get(key);
  if (!p) {
    p = (async () => {
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
