/**
 * Records and form-field values of the StateClient (./client.ts): answered from the last run when the instance did
 * not change since it looked (a record written through only once a listing shows it unchanged since our write),
 * else asked and written into the next state. Functions run with the client as `this`.
 */
import pLimit, { type LimitFunction } from "p-limit";
import type { FormFieldQuery, FormFieldValue, InstanceRecord, Page } from "../api/index.js";
import { isRecord } from "../model/guards.js";
import { compactRecord, expandRecord } from "./compact.js";
import type { RecordRef, StateIndex } from "./reader.js";
import { RecordEntrySchema, valueLine, type RecordEntry } from "./schema.js";
import {
  flagsOf,
  idsOnly,
  parsedOrNothing,
  processOf,
  structureDigest,
  type RunWorkflow,
  type StateRun,
} from "./run.js";

/** A record of the previous run, read and checked in full now; undefined (read it again) when its line does not fit. */
export async function keptRecord(
  this: StateRun,
  ref: RecordRef,
): Promise<{ record: InstanceRecord; entry: RecordEntry; text: string } | undefined> {
  const [text = ""] = await (this.prev as StateIndex).lines([ref.line]);
  const raw = parsedOrNothing(text);
  const parsed = RecordEntrySchema.safeParse(isRecord(raw) ? raw.record : undefined);
  if (!parsed.success || parsed.data.compact.record.id !== ref.id) return undefined;
  const record = expandRecord(parsed.data.compact, this.prev?.skeletons ?? new Map());
  return record ? { record, entry: parsed.data, text } : undefined;
}

/**
 * The most records with values a run holds to answer again (./values.ts). Those are the few a run asks twice (the
 * plan's early read of what was updated in the last minute, then the hydration; the changed few whose field values
 * come from their records); a first sync reads every record once, and holding each would grow with the tenant.
 * Past the cap a second ask reads again: the same answer at the cost of a request.
 */
export const VALUE_RECORDS_KEPT = 2000;

export function getInstance(
  this: StateRun,
  id: number,
  opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {},
): Promise<InstanceRecord> {
  // a record with values this run read already (the plan's early read of a changed instance, or one its field
  // values were taken from: ./values.ts) answers the same question again, not read twice; a structure probe's read
  // is always made (its structure is checked below)
  const read = flagsOf(opts) === "v" && !this.probes.has(id) ? this.valueRecords.get(id) : undefined;
  if (read) return read;
  const p = recordOf.call(this, id, opts);
  if (flagsOf(opts) === "v" && !this.valueRecords.has(id) && this.valueRecords.size < VALUE_RECORDS_KEPT) {
    p.catch(() => this.valueRecords.delete(id));
    this.valueRecords.set(id, p);
  }
  return p;
}

async function recordOf(
  this: StateRun,
  id: number,
  opts: { injectValues?: boolean; stepsTimeFrame?: boolean },
): Promise<InstanceRecord> {
  await this.checkBack();
  const cached = this.prev?.records.find(id, flagsOf(opts));
  // the structure probe too: the newest instance's snapshot changes only with it (or a newer one starts), both
  // listed as changed, and a fresh read of it is checked against the structure digest below
  if (cached) {
    const kept = await keptTurn(this)(() => keptAnswer.call(this, id, cached, opts));
    if (kept) return kept;
  }
  const record =
    (flagsOf(opts) === "v" ? polledRecord.call(this, id) : undefined) ?? (await this.service.getInstance(id, opts));
  this.saw([id], true);
  const pid = processOf(record);
  if (pid === undefined) return record;
  const w = this.workflow(pid);
  w.tally.recordsRead++;
  const updated = typeof record.last_updated_time === "string" ? Date.parse(record.last_updated_time) : NaN;
  if (!Number.isNaN(updated) && (w.newestSeen === null || updated > w.newestSeen)) w.newestSeen = updated;
  if (this.probes.has(id) && opts.injectValues) {
    const digest = structureDigest(record.process_snapshot);
    if (digest !== null) {
      if (w.structure !== null && w.structure !== digest && !w.cold) {
        w.cold = true;
        this.opts.warn(`state: the structure of workflow ${pid} changed since the last run: it is read in full`);
      }
      w.structure = digest;
    }
  }
  const entry: RecordEntry = {
    process_id: pid,
    flags: flagsOf(opts),
    compact: compactRecord(record, this.newSkeletons),
  };
  if (!this.recordsWritten.has(id, entry.flags)) {
    w.synced++;
    this.checkpoints.counted();
  }
  this.recordsWritten.add(id, entry.flags);
  this.writeRecord(JSON.stringify({ record: entry }), entry.compact.skeleton);
  await this.due();
  return record;
}

/**
 * Records answered from the state at once: a chunk of a rule asks for 500 together, and each one's line, parsed line
 * and expanded record, held while the others were read, outlived the young generation's scavenges (at 1,000,000
 * every one of them was promoted to the old generation, and collecting them was a third of a steady run's time).
 * A few at a time, each is read, checked, written and let go of but for the record the caller asked for; the
 * answers and the requests are the same (the state asks nothing for them).
 */
const KEPT_AT_ONCE = 16;
/** The same for a page of field values kept (up to 500 lines each). */
const VALUE_PAGES_AT_ONCE = 2;
const keptTurns = new WeakMap<StateRun, LimitFunction>();
const valueTurns = new WeakMap<StateRun, LimitFunction>();

function turnOf(turns: WeakMap<StateRun, LimitFunction>, run: StateRun, n: number): LimitFunction {
  let turn = turns.get(run);
  if (!turn) turns.set(run, (turn = pLimit(n)));
  return turn;
}

const keptTurn = (run: StateRun): LimitFunction => turnOf(keptTurns, run, KEPT_AT_ONCE);

/** The record the previous run kept, when it still holds (written into the next state); else undefined: ask it. */
async function keptAnswer(
  this: StateRun,
  id: number,
  cached: RecordRef,
  opts: { injectValues?: boolean; stepsTimeFrame?: boolean },
): Promise<InstanceRecord | undefined> {
  const w = this.workflow(cached.process_id);
  const kept = w.cold ? undefined : await this.keptRecord(cached);
  const holds =
    kept &&
    (cached.written !== null
      ? kept.record.last_updated_time === cached.written && (await this.stillOurs(w, cached, cached.written))
      : !(await this.changedIds(w)).has(id));
  if (kept && holds && !w.cold) {
    if (!this.recordsWritten.has(id, cached.flags)) {
      this.recordsWritten.add(id, cached.flags);
      w.synced++;
      this.checkpoints.counted();
      // shown unchanged now: from here on an ordinary record of this run
      const { written: _w, ...entry } = kept.entry;
      this.writeRecord(cached.written !== null ? JSON.stringify({ record: entry }) : kept.text, cached.skeleton);
      if (cached.written !== null) w.tally.written++;
    }
    this.saw([id], false);
    if (cached.written === null) w.tally.recordsKept++;
    // asked again, the state answers it again without a request: not held for the run (at a million instances
    // the records a run hydrates from the state, held whole, were most of its memory)
    if (flagsOf(opts) === "v") this.valueRecords.delete(id);
    return kept.record;
  }
  return undefined;
}

export async function* formFieldPages(
  this: StateRun,
  processId: number,
  stepId: number,
  actionId: number,
  query: FormFieldQuery = {},
): AsyncGenerator<Page<FormFieldValue>> {
  const ids = idsOnly(query);
  if (!ids || ids.some((n) => !Number.isSafeInteger(n)))
    return yield* this.service.formFieldPages(processId, stepId, actionId, query);
  const w = this.workflow(processId);
  const old = w.cold ? undefined : this.prev?.fields.get(`${processId}:${stepId}:${actionId}`);
  const changed = old ? await this.changedIds(w) : new Set<number>();
  const write = (id: number, v: FormFieldValue | null): void =>
    this.out.line(JSON.stringify({ value: { f: [processId, stepId, actionId], id, v } }));
  const hitIds: number[] = [];
  const hitLines: number[] = [];
  const missing: number[] = [];
  for (const id of ids) {
    const line = old && !changed.has(id) ? old.get(id) : undefined;
    if (line === undefined) missing.push(id);
    else {
      hitIds.push(id);
      hitLines.push(line);
    }
  }
  const results: FormFieldValue[] = [];
  const answered: number[] = [];
  // the lines read, checked and written a few calls at a time (as kept records are): the plan asks many pages of
  // 500 ids at once, and each one's 500 lines held while the others were read outlived the young generation
  if (hitLines.length > 0)
    await turnOf(
      valueTurns,
      this,
      VALUE_PAGES_AT_ONCE,
    )(async () => {
      const texts = await (this.prev as StateIndex).lines(hitLines);
      hitIds.forEach((id, i) => {
        const hit = valueLine(parsedOrNothing(texts[i] ?? ""));
        if (!hit || hit.id !== id) {
          missing.push(id); // a line that does not fit: asked again
          return;
        }
        answered.push(id);
        this.shareSettings(hit.v);
        this.out.line(texts[i] as string); // the same line again: still true
        if (hit.v !== null) results.push(hit.v);
      });
    });
  this.saw(answered, false);
  w.tally.valuesKept += answered.length;
  // a few changed instances: their records carry every field at once (./values.ts)
  if (missing.length > 0 && !w.cold && this.cheaperByRecords(w, missing)) {
    const derived = await this.valuesByRecords(stepId, actionId, missing);
    if (derived) {
      w.tally.valuesByRecords += missing.length;
      for (const id of missing) {
        const v = derived.get(id) ?? null;
        this.shareSettings(v);
        write(id, v);
        if (v) results.push(v);
      }
      this.saw(missing, true);
      missing.length = 0;
    }
  }
  if (missing.length > 0) {
    const missed = new Set(missing);
    const found = new Map<number, FormFieldValue>();
    w.tally.valuesAsked += missing.length;
    for await (const page of this.service.formFieldPages(processId, stepId, actionId, {
      ...query,
      instance_ids: missing,
    })) {
      w.tally.fieldPages++;
      for (const r of page.results) found.set(r.instance_id, r);
    }
    for (const r of found.values()) this.shareSettings(r);
    for (const id of missing) write(id, found.get(id) ?? null);
    for (const r of found.values()) if (missed.has(r.instance_id)) results.push(r);
    this.saw(missing, true);
  }
  await this.due();
  yield { count: results.length, next: null, previous: null, results };
}

/**
 * Whether a record we wrote through still holds: its instance's last_updated_time is exactly the one our write's
 * answer gave. One listing (`last_updated_time` after and before that very instant: the bounds are inclusive)
 * answers it for every instance of ours written at that instant; a later change by anyone moves the time and
 * drops the instance from it. A single write at its instant is read instead (one request either way).
 */
export async function stillOurs(this: StateRun, w: RunWorkflow, ref: RecordRef, lut: string): Promise<boolean> {
  const key = `${w.pid}|${lut}`;
  if ((this.writtenAt.get(key) ?? 0) < 2) return false;
  let p = this.unchangedAt.get(key);
  if (!p) {
    p = (async () => {
      const ids = new Set<number>();
      for await (const page of this.service.instancePages(w.pid, {
        last_updated_time_after: lut,
        last_updated_time_before: lut,
      })) {
        w.tally.windows++;
        for (const i of page.results) ids.add(i.id);
      }
      return ids;
    })();
    p.catch(() => undefined);
    this.unchangedAt.set(key, p);
  }
  return (await p).has(ref.id);
}

/**
 * A record the watcher's poll read with values just before this run, after its changes listing (./known.ts): this
 * run's own read of it, as if made first (the run's look is bounded by that listing's instant, ./marks.ts).
 */
function polledRecord(this: StateRun, id: number): InstanceRecord | undefined {
  for (const l of this.opts.listed?.values() ?? []) for (const r of l.records ?? []) if (r.id === id) return r;
  return undefined;
}
