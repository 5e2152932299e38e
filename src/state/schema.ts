/**
 * The state file's shape (docs/operating.md, "State between runs"): JSON lines, each small, so the file is written as
 * a run goes and the next run reads a line only when it needs it (dir.ts keeps where each line is, not what it says).
 * Line 1 is the header; then, in any order, list elements (one a line, tagged with their listing's number), the head
 * of each listing (after its elements), snapshot skeletons, records and form-field values (one a line); then the
 * workflows' bookmarks and a last line counting the lines before it and holding the MAC of every byte before it
 * (mac.ts), so a cut or edited file is told from a whole one. Every line is checked when the file is opened (list
 * elements, field values and records by their head as flowrules writes them, ./heads.ts, their bodies against these
 * schemas when a run uses them; any other line against these schemas), the service's parts against the API client's:
 * a file that does not fit or does not verify is not used (a full run, one warning), never half-used.
 */
import { z } from "zod";
import {
  FormFieldValueSchema,
  InstanceListItemSchema,
  InstanceRecordSchema,
  type FormFieldValue,
  type InstanceListItem,
} from "../api/schemas.js";

export const STATE_FORMAT = "flowrules-state";
/**
 * 3: the last line holds the MAC (mac.ts); 2: one list element or field value a line, bookmarks in their own line
 * before the last; 1 kept whole listings in a line. An older format costs one full run; a newer one is left alone.
 */
export const STATE_FORMAT_VERSION = 3;
export const STATE_FILE = "state.jsonl";
export const LOCK_FILE = "state.lock";

const queryValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))]);
const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "an ISO 8601 date-time");
const int = z.number().int();
const count = z.number().int().nonnegative();

/** A listing's head: the question, when it was asked, and its pages' sizes; its elements are `item` lines before it. */
export const ListingHeadSchema = z.object({
  /** the listing's number in this file: its elements carry it */
  n: count,
  process_id: int,
  query: z.record(z.string(), queryValue),
  /** the `now` the query was asked at (relative bounds resolved against it) */
  run_at: iso,
  /** false when only the first pages were read (a caller stopped early) */
  complete: z.boolean(),
  /** per page read: the service's `count`, and how many elements it held */
  pages: z.array(z.object({ count: count.nullable(), size: count })),
});
export type ListingHead = z.infer<typeof ListingHeadSchema>;

export const CompactRecordSchema = z.object({
  record: InstanceRecordSchema,
  skeleton: z.string().nullable(),
  snapshot: z.unknown().optional(),
  values: z.array(z.tuple([count, count, z.unknown()])),
  times: z.array(z.tuple([count, z.unknown()])),
});

export const RecordEntrySchema = z.object({
  process_id: int,
  /** the read's options: "", "v" (inject_values), "t" (steps_time_frame), "vt" */
  flags: z.string(),
  /**
   * true: written through, the answer of our own complete_step/save_step (not a read). The next run uses it only once
   * a listing shows the instance's last_updated_time still exactly the one this record holds (nobody changed it since)
   */
  written: z.literal(true).optional(),
  compact: CompactRecordSchema,
});
export type RecordEntry = z.infer<typeof RecordEntrySchema>;

/**
 * A record line is checked in full when it is used (a line that does not fit then is read again from the service);
 * on opening, only what finds it.
 */
export const RecordHeadSchema = z.object({
  record: z.object({
    process_id: int,
    flags: z.string(),
    written: z.literal(true).optional(),
    compact: z.looseObject({
      record: z.looseObject({ id: int, last_updated_time: z.unknown().optional() }),
      skeleton: z.string().nullable(),
    }),
  }),
});

export const WorkflowMarkSchema = z.object({
  /** the `now` of the last run that read this workflow (by our clock: the fallback bookmark, less two minutes) */
  run_at: iso,
  /**
   * the bookmark: when that run began to look, by the service's clock (its Date headers, less the exchange's
   * duration); changes are listed from it less a few seconds for late commits. Null (or absent): some answer carried
   * no Date, and the next run lists from `run_at` less two minutes, for clock skew
   */
  looked_at: iso.nullable().optional(),
  /** the newest last_updated_time seen in a record of it, if any */
  newest_seen: iso.nullable(),
  /** when it was last read in full (older than --resync-after: read in full again) */
  synced_at: iso,
  /** digest of its structure (steps, fields, types) as the newest instance shows it */
  structure: z.string().nullable(),
  /**
   * the workflow's first sync is not finished (a checkpoint of a run that was stopped, or is still reading): what the
   * state holds of it is used, and the next run reads the rest (docs/operating.md, "A first sync over several runs")
   */
  partial: z.literal(true).optional(),
  /** with `partial`: distinct instances read so far, and how many the service counted (for the progress line) */
  synced: count.optional(),
  total: count.nullable().optional(),
  /** its count and newest started instance, when a run counted it (went-back.ts); absent in older states */
  census: z.object({ count: int.nullable(), newest: int.nullable() }).optional(),
});
export type WorkflowMark = z.infer<typeof WorkflowMarkSchema>;

export const HeaderSchema = z.object({
  format: z.literal(STATE_FORMAT),
  format_version: z.number().int(),
  flowrules_version: z.string(),
  base_url: z.string(),
  /**
   * the id of the API key the state was made with (mac.ts: 16 hex digits of an HMAC under it): another key may see
   * other instances, so its state is not used; neither the key nor the MAC key can be had from it
   */
  key_digest: z.string().nullable(),
  /** when the run that wrote it started writing */
  written_at: iso,
  run_at: iso,
  /** rule name → digest of its definition */
  rules: z.record(z.string(), z.string()),
});
export type StateHeader = z.infer<typeof HeaderSchema>;

/** Lines other than list elements, field values and records, checked by zod as they are. */
export const LineSchema = z.union([
  z.object({ listing: ListingHeadSchema }).strict(),
  /** instances a bulk abort of ours returned (written through: aborted by us, as of that answer) */
  z.object({ aborted: z.object({ ids: z.array(int) }) }).strict(),
  z.object({ skeleton: z.object({ key: z.string(), snapshot: z.unknown() }) }).strict(),
  z.object({ marks: z.record(z.string(), WorkflowMarkSchema) }).strict(),
  /** lines: how many come before it; mac: HMAC-SHA256 (hex) of every byte before it */
  z.object({ end: z.object({ lines: count, mac: z.string().regex(/^[0-9a-f]{64}$/) }).strict() }).strict(),
  /**
   * A checkpoint while a run reads, after a marks line: the same as `end`, but lines may follow. A file cut after it
   * (the run was killed, or is still writing) is used up to its last checkpoint that verifies.
   */
  z.object({ checkpoint: z.object({ lines: count, mac: z.string().regex(/^[0-9a-f]{64}$/) }).strict() }).strict(),
]);

/** The marks line: workflow id → its bookmark. */
export type Marks = Record<string, WorkflowMark>;

/**
 * Form-field values with equal `settings` (the field's definition, the same for every instance) made to share one
 * object: a run holds thousands of values, each otherwise with its own copy.
 */
export function settingsSharer(): (value: FormFieldValue | null) => void {
  const seen = new Map<string, FormFieldValue["settings"]>();
  return (value) => {
    if (!value || value.settings === null || typeof value.settings !== "object") return;
    const key = JSON.stringify(value.settings);
    const shared = seen.get(key);
    if (shared === undefined) seen.set(key, value.settings);
    else value.settings = shared;
  };
}

// ---- list elements and field values: checked without zod's copy ---------------------------------------------------
// Tens of thousands of them are read a run: each is checked by the plain checks below, which pass only what the full
// schema passes unchanged (no transform, no stripped key); anything else takes the full schema.

const isId = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v > 0;
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);
const isNullishString = (v: unknown): boolean => v === undefined || v === null || typeof v === "string";
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isNullishObject = (v: unknown): boolean => v === undefined || v === null || isPlainObject(v);

/** what InstanceListItemSchema passes and returns as it is */
function plainListItem(v: unknown): v is InstanceListItem {
  return (
    isPlainObject(v) &&
    isId(v.id) &&
    typeof v.name === "string" &&
    (v.status === "running" || v.status === "completed" || v.status === "aborted") &&
    isNullishString(v.public_url)
  );
}

/** what FormFieldValueSchema.nullable() passes and returns as it is */
function plainFieldValue(v: unknown): v is FormFieldValue | null {
  return (
    v === null ||
    (isPlainObject(v) &&
      isId(v.instance_id) &&
      isNullishString(v.instance_name) &&
      isNullishObject(v.value) &&
      isNullishObject(v.settings))
  );
}

/** `{"item": {"l": listing number, "p": page index, "v": list element}}` */
export interface ItemLine {
  l: number;
  p: number;
  v: InstanceListItem;
}

/** `{"value": {"f": [workflow, step, action], "id": instance, "v": form-field record or null (no value there)}}` */
export interface ValueLine {
  f: [number, number, number];
  id: number;
  v: FormFieldValue | null;
}

/** A list element line as the full schema would return it; undefined when it does not fit. */
export function itemLine(raw: unknown): ItemLine | undefined {
  if (!isPlainObject(raw) || !isPlainObject(raw.item) || Object.keys(raw).length !== 1) return undefined;
  const { l, p, v } = raw.item;
  if (!isInt(l) || l < 0 || !isInt(p) || p < 0) return undefined;
  if (plainListItem(v)) return { l, p, v };
  const full = InstanceListItemSchema.safeParse(v);
  return full.success ? { l, p, v: full.data } : undefined;
}

/** A field value line as the full schema would return it; undefined when it does not fit. */
export function valueLine(raw: unknown): ValueLine | undefined {
  if (!isPlainObject(raw) || !isPlainObject(raw.value) || Object.keys(raw).length !== 1) return undefined;
  const { f, id, v } = raw.value;
  if (!Array.isArray(f) || f.length !== 3 || !f.every(isInt) || !isInt(id)) return undefined;
  const key = f as [number, number, number];
  if (plainFieldValue(v)) return { f: key, id, v };
  const full = FormFieldValueSchema.nullable().safeParse(v);
  return full.success ? { f: key, id, v: full.data } : undefined;
}

/** What the reader keeps of a record line (its head, as `RecordHeadSchema` gives it). */
export interface RecordHead {
  process_id: number;
  flags: string;
  written: boolean;
  id: number;
  last_updated_time: unknown;
  skeleton: string | null;
}

/**
 * A record line's head by plain checks, which pass only what `RecordHeadSchema` passes (the reader checks every
 * record of the file when it opens it: at a million instances zod's pass was a tenth of the time); undefined when
 * they do not pass, and the reader then asks the schema, for its answer and its message.
 */
export function recordHead(raw: unknown): RecordHead | undefined {
  if (!isPlainObject(raw)) return undefined;
  const r = raw.record;
  if (!isPlainObject(r) || !isInt(r.process_id) || typeof r.flags !== "string") return undefined;
  if (r.written !== undefined && r.written !== true) return undefined;
  const c = r.compact;
  if (!isPlainObject(c) || !isPlainObject(c.record) || !isInt(c.record.id)) return undefined;
  if (c.skeleton !== null && typeof c.skeleton !== "string") return undefined;
  return {
    process_id: r.process_id,
    flags: r.flags,
    written: r.written === true,
    id: c.record.id,
    last_updated_time: c.record.last_updated_time,
    skeleton: c.skeleton,
  };
}
