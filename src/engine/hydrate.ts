/**
 * Hydration: fetch, for one page of selected instances, only what the rule's expressions need, at the lowest
 * request cost the API allows (docs/design.md, "Performance model"):
 * - nothing beyond the list element → no request at all;
 * - field values only → one form-field request (the form-field listing, `instance_ids` = the page's ids) per field not already
 *   known, unless reading the few instances one by one is cheaper;
 * - anything of the full record → one GET /instances/{id}/?inject_values=true per instance not already read, which
 *   brings every field value with it.
 */
import { WrongRecordError, type ApiClient, type InstanceListItem, type InstanceRecord } from "../api/index.js";
import type { FieldRef } from "../rules/types.js";
import { ABSENT, rememberSnapshotValues, rememberValue, type Almanac } from "./almanac.js";
import { fieldTypeOf } from "../model/values.js";
import { fieldKey } from "../model/field-values.js";
import type { InstanceData, InstanceStatus } from "../actions/instance.js";
import type { KnownKeys } from "./priority-known.js";

/** The most ids one form-field request carries (form-field pages hold at most 500: docs/service.md, "Limits"). */
export const FIELD_CHUNK = 500;

export interface PageNeeds {
  processId: number;
  record: boolean;
  /** keep read records in the almanac (another rule of the workflow needs them too) */
  cacheRecords: boolean;
  fields: FieldRef[];
  /**
   * every field key any rule of the workflow reads: a read snapshot that does not mention one tells its absence too,
   * so no rule asks for it again
   */
  knownKeys?: readonly string[];
  /** read records with step completion times (a rule of the workflow calls a waiting helper: src/engine/waiting.ts) */
  times?: boolean;
  /** record keys learnt from filtered lists instead of reads, by instance */
  known?: KnownKeys;
}

function asStatus(s: string): InstanceStatus {
  return s === "completed" || s === "aborted" ? s : "running";
}

async function readRecords(
  client: ApiClient,
  al: Almanac,
  ids: number[],
  needs: PageNeeds,
): Promise<Map<number, InstanceRecord>> {
  const out = new Map<number, InstanceRecord>();
  const keys = [...new Set([...needs.fields.map((f) => fieldKey(f.step, f.action)), ...(needs.knownKeys ?? [])])];
  const missing: number[] = [];
  for (const id of ids) {
    const cached = al.records.get(id);
    // a kept record without completion times does not serve a rule that reads them
    if (cached && (needs.times !== true || al.timed.has(id))) out.set(id, cached);
    else missing.push(id);
  }
  const read = await Promise.all(
    missing.map((id) =>
      client.getInstance(id, { injectValues: true, ...(needs.times === true ? { stepsTimeFrame: true } : {}) }).then(
        (record) => ({ id, record }),
        (err: unknown) => {
          // another instance's record (a broken cache or proxy) is not this one's: the instance gets an error instead
          // of being evaluated without its record; any other failure fails the rule as before
          if (err instanceof WrongRecordError) return { id, wrong: err.message };
          throw err;
        },
      ),
    ),
  );
  for (const r of read) {
    const { id } = r;
    if (!("record" in r)) {
      al.unreadable.set(id, r.wrong);
      continue;
    }
    const record = r.record;
    al.unreadable.delete(id);
    out.set(record.id, record);
    rememberSnapshotValues(al, record, keys);
    if (needs.cacheRecords) {
      al.records.set(record.id, record);
      if (needs.times === true) al.timed.add(record.id);
      else al.timed.delete(record.id);
    }
  }
  return out;
}

async function readFields(client: ApiClient, al: Almanac, ids: number[], needs: PageNeeds): Promise<void> {
  const todo = needs.fields
    .map((f) => ({ ref: f, key: fieldKey(f.step, f.action) }))
    .map(({ ref, key }) => ({ ref, key, ids: ids.filter((id) => !al.values.get(key)?.has(id)) }))
    .filter((t) => t.ids.length > 0);
  if (todo.length === 0) return;

  const bulkCost = todo.reduce((n, t) => n + Math.ceil(t.ids.length / FIELD_CHUNK), 0);
  const unread = new Set(todo.flatMap((t) => t.ids));
  if (unread.size < bulkCost) {
    // fewer instances than field requests: one read per instance brings every field
    await readRecords(client, al, [...unread], { ...needs, cacheRecords: needs.cacheRecords });
    return;
  }
  await Promise.all(
    todo.flatMap((t) => {
      const chunks: number[][] = [];
      for (let i = 0; i < t.ids.length; i += FIELD_CHUNK) chunks.push(t.ids.slice(i, i + FIELD_CHUNK));
      return chunks.map((chunk) => fetchFieldChunk(client, al, needs.processId, t.ref, chunk));
    }),
  );
}

/** One form-field request (4.6) for up to 500 ids; every id it does not list is remembered as "no value". */
export async function fetchFieldChunk(
  client: ApiClient,
  al: Almanac,
  processId: number,
  ref: FieldRef,
  chunk: number[],
): Promise<void> {
  const key = fieldKey(ref.step, ref.action);
  const pages = client.formFieldPages(processId, ref.step, ref.action, { instance_ids: chunk, limit: FIELD_CHUNK });
  const found = new Set<number>();
  for await (const page of pages) {
    for (const r of page.results) {
      found.add(r.instance_id);
      rememberValue(al, key, r.instance_id, r.value, fieldTypeOf(r.settings));
    }
  }
  // the endpoint lists only instances where the field is used with a value: the rest have none
  for (const id of chunk) if (!found.has(id)) rememberValue(al, key, id, undefined);
}

/** Reads records (those not already kept) and keeps them, with every field value their snapshots carry. */
export async function readAndKeepRecords(
  client: ApiClient,
  al: Almanac,
  ids: number[],
  knownKeys: readonly string[],
  times = false,
): Promise<void> {
  await readRecords(client, al, ids, { processId: 0, record: true, cacheRecords: true, fields: [], knownKeys, times });
}

/** Reads records only for the field values their snapshots carry (cheaper than field pages for a few ids). */
export async function readRecordsForValues(
  client: ApiClient,
  al: Almanac,
  ids: number[],
  knownKeys: readonly string[],
): Promise<void> {
  await readRecords(client, al, ids, { processId: 0, record: true, cacheRecords: false, fields: [], knownKeys });
}

/** A chunk's data once read: each instance's record, and its data made when it is evaluated. */
export interface HydratedChunk {
  /** the record read for the instance (rules that read records) */
  record(id: number): InstanceRecord | undefined;
  /**
   * The instance's data, made now from what was read: one instance's at a time, so a chunk's data (a Map of values
   * per instance, the record) is not all held while the chunk is evaluated (held that long, it outlives the young
   * generation's scavenges and fills the old one). A record is let go of once its instance's data is made, unless
   * the chunk names the instance twice.
   */
  data(item: InstanceListItem): InstanceData;
}

/** Reads what the chunk's instances need (records or field values not yet known), then makes their data on demand. */
export async function hydratePage(
  client: ApiClient,
  al: Almanac,
  items: InstanceListItem[],
  needs: PageNeeds,
): Promise<HydratedChunk> {
  const ids = items.map((i) => i.id);
  const records = needs.record ? await readRecords(client, al, ids, needs) : undefined;
  if (!needs.record && needs.fields.length > 0) await readFields(client, al, ids, needs);
  const once = new Set(ids).size === ids.length;
  const keys = needs.fields.map((f) => fieldKey(f.step, f.action));
  return {
    record: (id) => records?.get(id),
    data: (item) => {
      const values = new Map<string, unknown>();
      for (const key of keys) {
        const v = al.values.get(key)?.get(item.id);
        if (v !== undefined) values.set(key, v === ABSENT ? undefined : v);
      }
      const record = records?.get(item.id);
      if (once) records?.delete(item.id);
      const unreadable = needs.record && !record ? al.unreadable.get(item.id) : undefined;
      const known = needs.known?.get(item.id);
      return {
        id: item.id,
        name: item.name,
        status: asStatus(item.status),
        public_url: item.public_url ?? null,
        process_id: needs.processId,
        ...(record ? { record } : {}),
        ...(known ? { known } : {}),
        ...(unreadable ? { unreadable } : {}),
        values,
      };
    },
  };
}
