/**
 * The records with values a run read, held to answer the same question again without a second request (the plan's
 * early read of a changed instance, then its hydration; the changed few whose field values come from their records:
 * ./records.ts, ./values.ts, ./known.ts). A read in flight is held as its promise; once it came back, as the state
 * file keeps a record (./compact.ts: the snapshot's skeleton once per structure, the record's own values and step
 * times), one string of JSON each, about a quarter of the record as objects (~0.9 KB against ~3.4 KB in the
 * benchmark's scenario: a first sync holds the first `VALUE_RECORDS_KEPT` it reads to the end of the run).
 * Each answer is expanded anew, as a record answered from the state is, so no caller shares another's object.
 */
import type { InstanceRecord } from "../api/index.js";
import { compactRecord, expandRecord, type CompactRecord } from "./compact.js";

export class ValueRecords {
  /** reads still in flight */
  private readonly reads = new Map<number, Promise<InstanceRecord>>();
  /** reads that came back: their compact form as JSON, or the record itself when it does not expand to itself */
  private readonly held = new Map<number, string | InstanceRecord>();

  /** `skeletons`: where compact records find their snapshot's skeleton (the run's, shared with its writer) */
  constructor(private readonly skeletons: Map<string, unknown>) {}

  get size(): number {
    return this.reads.size + this.held.size;
  }

  has(id: number): boolean {
    return this.reads.has(id) || this.held.has(id);
  }

  get(id: number): Promise<InstanceRecord> | undefined {
    const read = this.reads.get(id);
    if (read) return read;
    const kept = this.held.get(id);
    if (kept === undefined) return undefined;
    if (typeof kept !== "string") return Promise.resolve(kept);
    const record = expandRecord(JSON.parse(kept) as CompactRecord, this.skeletons);
    // the skeletons are the run's and never dropped: a record that was compacted here expands
    if (!record) throw new Error(`the record of instance ${id} held by this run lost its skeleton`);
    return Promise.resolve(record);
  }

  /** Holds a read; once it comes back (and is still the one held for `id`), in its compact form. */
  set(id: number, read: Promise<InstanceRecord>): this {
    this.held.delete(id);
    this.reads.set(id, read);
    read.then(
      (record) => {
        if (this.reads.get(id) !== read) return; // dropped or replaced meanwhile
        this.reads.delete(id);
        this.held.set(id, compacted(record, this.skeletons));
      },
      () => undefined, // the caller drops a failed read
    );
    return this;
  }

  delete(id: number): boolean {
    const had = this.has(id);
    this.reads.delete(id);
    this.held.delete(id);
    return had;
  }
}

/**
 * A record as held: its compact form as JSON when that expands to an equal record (JSON-equal: the service's
 * answer is JSON, and the state file keeps it so), else the record itself (a value JSON cannot carry).
 */
function compacted(record: InstanceRecord, skeletons: Map<string, unknown>): string | InstanceRecord {
  const text = JSON.stringify(compactRecord(record, skeletons));
  const back = expandRecord(JSON.parse(text) as CompactRecord, skeletons);
  return back !== undefined && sameJson(back, record) ? text : record;
}

/** Equal as JSON values, whatever the order of keys (an expanded record puts its snapshot last). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
