/**
 * Writing the StateClient's next state (./client.ts): checkpoints while a sync reads (./sync.ts decides when), the
 * previous state's answers that still hold carried at the first one, and the commit at the end of a run that read
 * all it needed. Functions run with the client as `this`.
 */
import type { StateIndex } from "./reader.js";
import type { StateRun } from "./run.js";
import type { SyncProgress } from "./sync.js";

/**
 * At the first checkpoint, which replaces the previous state: the previous state's records and field values that
 * still hold and that this run has not written yet, so a run stopped before it got to them does not lose them (a
 * sync resumed twice would read them again). Of a workflow this run uses, those its changes listing shows unchanged
 * (as a kept record: valid as of this run's look); of one it does not use, all, with that workflow's old bookmark.
 * Written-through records are left out (they need a listing of their own to be used).
 */
export async function carryAtCheckpoint(this: StateRun): Promise<void> {
  const prev = this.prev;
  if (this.carried || !prev) return;
  this.carried = true;
  if (this.wentBack !== undefined) return; // the service went back: nothing of the previous state holds
  const holds = (pid: number, id: number): boolean => {
    const w = this.workflows.get(pid);
    if (w) return !w.cold && w.changedSet !== undefined && !w.changedSet.has(id);
    return prev.marks[String(pid)] !== undefined;
  };
  // a batch at a time: no object per record of the whole state at once
  for await (const batch of batches(prev.records.values(), (r) => r.written === null && holds(r.process_id, r.id))) {
    const texts = await prev.lines(batch.map((r) => r.line));
    batch.forEach((r, k) => {
      const text = texts[k] ?? "";
      if (text === "") return; // no longer as verified: left out
      if (this.recordsWritten.has(r.id, r.flags)) return; // this run wrote it meanwhile: its own holds
      this.recordsWritten.add(r.id, r.flags);
      this.writeRecord(text, r.skeleton);
      const w = this.workflows.get(r.process_id);
      if (w) w.synced++;
    });
  }
  for (const [key, values] of prev.fields) {
    const pid = Number(key.split(":")[0]);
    for await (const batch of batches(values.entries(), ([id]) => holds(pid, id)))
      for (const text of await prev.lines(batch.map(([, line]) => line))) if (text !== "") this.out.line(text);
  }
  for (const [pid, mark] of Object.entries(prev.marks))
    if (!this.workflows.has(Number(pid))) this.carriedMarks[pid] = mark;
}

export async function writeCheckpoint(this: StateRun): Promise<void> {
  await this.carryAtCheckpoint();
  const progress = this.progress();
  try {
    await this.out.checkpoint(this.marks(false));
  } catch {
    return; // the writer keeps the error: the commit says it in one line; no further checkpoint is tried
  }
  this.checkpointed = progress;
  this.opts.onCheckpoint?.(progress);
}

/** A checkpoint now (the run was stopped or reached its --max-duration), when a sync is going on; its figures. */
export async function checkpoint(this: StateRun): Promise<SyncProgress | undefined> {
  if (!this.planned || !this.syncing() || !this.out.writable) return undefined;
  this.checkpointed = undefined;
  await this.checkpoints.now();
  return this.checkpointed;
}

/** After a record, a page or a field page was written: a checkpoint when one is due. */
export function due(this: StateRun): Promise<void> {
  return this.checkpoints.maybe(this.syncing());
}

/**
 * Completes the next state file and puts it in place: call only after a run that read all it needed. With no
 * planning through this client (`apply plan.json --state`), the previous state is carried forward whole, with its
 * bookmarks, and what was written through after it; with no previous state, nothing is written.
 */
export async function commit(this: StateRun): Promise<void> {
  if (this.planned) return this.out.commit(this.marks());
  if (!this.prev) return this.out.discard();
  await this.carryForward(this.prev);
  return this.out.commit(this.prev.marks);
}

/** Everything of the previous state, in batches of lines (`apply plan.json --state`: nothing was planned). */
export async function carryForward(this: StateRun, prev: StateIndex): Promise<void> {
  // page by page; a listing whose first page no longer verifies is left out (the next run asks it again)
  for (const ref of prev.listings.values()) await this.copyListing(ref);
  // a line that no longer verifies comes back as nothing: left out (the next run asks the service for it)
  const copy = async (lines: Iterable<number>): Promise<void> => {
    for await (const batch of batches(lines, () => true))
      for (const text of await prev.lines(batch)) if (text !== "") this.out.line(text);
  };
  for (const [key, snapshot] of prev.skeletons) {
    this.skeletonsWritten.add(key);
    this.out.line(JSON.stringify({ skeleton: { key, snapshot } }));
  }
  const own = new Set(this.own.map((o) => o.id));
  // a record we wrote through this run (already written) replaces the one of the last run
  await copy(linesOf(prev.records.values(), (r) => !this.recordsWritten.has(r.id, r.flags)));
  for (const values of prev.fields.values()) await copy(values.values());
  const aborted = [...prev.aborted].filter((id) => !own.has(id));
  if (aborted.length > 0) this.out.line(JSON.stringify({ aborted: { ids: aborted } }));
}

/** Lines are read again this many at a time (one read for lines near each other: ./state-index.ts). */
const BATCH = 2_000;

/** The items that pass, BATCH at a time (a batch is taken as the caller gets to it). */
async function* batches<T>(items: Iterable<T>, keep: (item: T) => boolean): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for (const item of items) {
    if (!keep(item)) continue;
    batch.push(item);
    if (batch.length >= BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

function* linesOf<T extends { line: number }>(
  items: Iterable<T>,
  keep: (item: T) => boolean,
): IterableIterator<number> {
  for (const item of items) if (keep(item)) yield item.line;
}
