/**
 * The state file's shape (docs/operating.md, "State between runs"): JSON lines, so it is written and read as a
 * stream at 100,000 instances. Line 1 is the header; then listings, snapshot skeletons, records and field values,
 * one a line; the last line counts the lines before it, so a cut file is told from a whole one. Every line is
 * checked against these schemas and the service's parts against the API client's: a file that does not fit is not
 * used (a full run, one warning), never half-used.
 */
import { z } from "zod";
import { FormFieldValueSchema, InstanceListItemSchema, InstanceRecordSchema, type FormFieldValue } from "../api/schemas.js";

export const STATE_FORMAT = "flowrules-state";
export const STATE_FORMAT_VERSION = 1;
export const STATE_FILE = "state.jsonl";
export const LOCK_FILE = "state.lock";

const queryValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))]);
const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "an ISO 8601 date-time");

export const ListingSchema = z.object({
  process_id: z.number().int(),
  query: z.record(z.string(), queryValue),
  /** the `now` the query was asked at (relative bounds resolved against it) */
  run_at: iso,
  /** false when only the first pages were read (a caller stopped early) */
  complete: z.boolean(),
  pages: z.array(z.object({ count: z.number().int().nonnegative().nullable(), results: z.array(InstanceListItemSchema) })),
});
export type Listing = z.infer<typeof ListingSchema>;

export const CompactRecordSchema = z.object({
  record: InstanceRecordSchema,
  skeleton: z.string().nullable(),
  snapshot: z.unknown().optional(),
  values: z.array(z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative(), z.unknown()])),
  times: z.array(z.tuple([z.number().int().nonnegative(), z.unknown()])),
});

export const RecordEntrySchema = z.object({
  process_id: z.number().int(),
  /** the read's options: "", "v" (inject_values), "t" (steps_time_frame), "vt" */
  flags: z.string(),
  compact: CompactRecordSchema,
});
export type RecordEntry = z.infer<typeof RecordEntrySchema>;

export const FieldEntrySchema = z.object({
  process_id: z.number().int(),
  step: z.number().int(),
  action: z.number().int(),
  /** per instance: the form-field record, or null when the field holds no value there */
  values: z.array(z.tuple([z.number().int(), FormFieldValueSchema.nullable()])),
});
export type FieldEntry = z.infer<typeof FieldEntrySchema>;

export const WorkflowMarkSchema = z.object({
  /** the bookmark: the `now` of the last run that read this workflow (changes are listed from it, minus a lookback) */
  run_at: iso,
  /** the newest last_updated_time seen in a record of it, if any */
  newest_seen: iso.nullable(),
  /** when it was last read in full (older than --resync-after: read in full again) */
  synced_at: iso,
  /** digest of its structure (steps, fields, types) as the newest instance shows it */
  structure: z.string().nullable(),
});
export type WorkflowMark = z.infer<typeof WorkflowMarkSchema>;

export const HeaderSchema = z.object({
  format: z.literal(STATE_FORMAT),
  format_version: z.number().int(),
  flowrules_version: z.string(),
  base_url: z.string(),
  written_at: iso,
  run_at: iso,
  /** rule name → digest of its definition */
  rules: z.record(z.string(), z.string()),
  /** workflow id → its bookmark */
  workflows: z.record(z.string(), WorkflowMarkSchema),
});
export type StateHeader = z.infer<typeof HeaderSchema>;

/**
 * A record line is checked in full when it is used (a line that does not fit then is read again from the service);
 * until then it is kept as its text: thousands of records held as strings weigh far less than as objects.
 */
export const RecordHeadSchema = z.object({
  record: z.object({
    process_id: z.number().int(),
    flags: z.string(),
    compact: z.looseObject({ record: z.looseObject({ id: z.number().int() }), skeleton: z.string().nullable() }),
  }),
});

/** A record as the state keeps it: what finds it, and its line's text. */
export interface KeptRecord {
  process_id: number;
  flags: string;
  id: number;
  skeleton: string | null;
  /**
   * the JSON text of its line, `{"record": RecordEntry}`, as UTF-8 bytes: outside the JS heap, so thousands of kept
   * records do not make V8 grow its old generation (docs/performance.md, "Memory"), and at one byte a character where
   * a string with one non-Latin-1 character (a name's dash) takes two
   */
  line: Buffer;
}

/**
 * Form-field values with equal `settings` (the field's definition, the same for every instance) made to share one
 * object: a state holds tens of thousands of values, each otherwise with its own copy.
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

const SLAB = 256 * 1024;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

/**
 * A kept record's line as UTF-8 bytes, packed with others into slabs of 256 KB: `Buffer.from` of a short string
 * would take a slot of Node's 8 KB pool sized for three bytes a character, leaving most of it unused.
 */
export function lineBytes(text: string): Buffer {
  const size = Buffer.byteLength(text, "utf8");
  if (size > SLAB / 4) return Buffer.from(text, "utf8");
  if (slabUsed + size > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + size);
  out.write(text, "utf8");
  slabUsed += size;
  return out;
}

export const LineSchema = z.union([
  z.object({ listing: ListingSchema }).strict(),
  z.object({ skeleton: z.object({ key: z.string(), snapshot: z.unknown() }) }).strict(),
  z.object({ field: FieldEntrySchema }).strict(),
  z.object({ end: z.object({ lines: z.number().int().nonnegative() }) }).strict(),
]);

/** A state in memory: what a run reads from the file and what it writes back. */
export interface StateData {
  header: StateHeader;
  listings: Listing[];
  skeletons: Map<string, unknown>;
  records: KeptRecord[];
  fields: FieldEntry[];
}

// ---- reading listing and field lines without zod's copy ------------------------------------------------------------
// A listing line holds ~25,000 list elements, a field line every value: zod's parse would copy each. Their shells are
// checked by zod with the elements left as they are, then each element by the plain checks below, which pass only what
// the full schema passes unchanged (no transform, no stripped key). Any other line takes the full schema.

const isId = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v > 0;
const isNullishString = (v: unknown): boolean => v === undefined || v === null || typeof v === "string";
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isNullishObject = (v: unknown): boolean => v === undefined || v === null || isPlainObject(v);

/** what InstanceListItemSchema passes and returns as it is */
function plainListItem(v: unknown): boolean {
  return isPlainObject(v) && isId(v.id) && typeof v.name === "string" && (v.status === "running" || v.status === "completed" || v.status === "aborted") && isNullishString(v.public_url);
}

/** what FormFieldValueSchema.nullable() passes and returns as it is */
function plainFieldValue(v: unknown): boolean {
  return v === null || (isPlainObject(v) && isId(v.instance_id) && isNullishString(v.instance_name) && isNullishObject(v.value) && isNullishObject(v.settings));
}

const ShellLineSchema = z.union([
  z.object({ listing: ListingSchema.extend({ pages: z.array(z.object({ count: z.number().int().nonnegative().nullable(), results: z.array(z.unknown()) })) }) }).strict(),
  z.object({ field: FieldEntrySchema.extend({ values: z.array(z.unknown()) }) }).strict(),
]);

/**
 * A listing or field line checked as the full schema would check it, its elements kept as parsed (not copied);
 * undefined when it is not such a line or an element needs the full schema (then LineSchema decides).
 */
export function plainLine(raw: unknown): { listing: Listing } | { field: FieldEntry } | undefined {
  const shell = ShellLineSchema.safeParse(raw);
  if (!shell.success) return undefined;
  const v = shell.data;
  if ("listing" in v) {
    for (const page of v.listing.pages) if (!page.results.every(plainListItem)) return undefined;
    return v as { listing: Listing };
  }
  for (const pair of v.field.values) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "number" || !Number.isSafeInteger(pair[0]) || !plainFieldValue(pair[1])) return undefined;
  }
  return v as { field: FieldEntry };
}
