/**
 * What the reader needs of a list element, form-field value or record line, read from the head of its bytes as
 * flowrules writes it: no string of the line, no object of what it says, no byte of its body looked at. At a million
 * instances `toString` and `JSON.parse` of every line were half of the reader's pass, and a scan of every byte in
 * JavaScript costs about as much as `JSON.parse` (docs/performance.md, "A million instances").
 *
 * What this leaves unchecked on opening is what a run checks when it uses a line (./records.ts, ./listings.ts,
 * ./held.ts check each line in full and ask the service for one that does not fit), and every byte is covered by the
 * MAC, verified in full when the file is opened: a line changed after flowrules wrote it does not verify. A line whose
 * head is not as flowrules writes it (`OTHER`) goes the reader's `JSON.parse` path, which checks it in full and says
 * why it does not fit. `test/state/heads.test.ts` holds both paths to one answer.
 */

export const OTHER = 0;
export const ITEM = 1;
export const VALUE = 2;
export const RECORD = 3;

/** What `headOf` found; one object, filled again for every line (no object per line). */
export interface Head {
  /** item: listing number and page */
  l: number;
  p: number;
  /** value: the field's workflow, step and action */
  f0: number;
  f1: number;
  f2: number;
  /** item: the element's id; value: the instance's; record: the record's */
  id: number;
  process_id: number;
  flags: string;
  skeleton: string | null;
}

export function newHead(): Head {
  return { l: 0, p: 0, f0: 0, f1: 0, f2: 0, id: 0, process_id: 0, flags: "", skeleton: null };
}

const bytes = (text: string): Buffer => Buffer.from(text, "latin1");
const ITEM_HEAD = bytes('{"item":{"l":');
const ITEM_P = bytes(',"p":');
const ITEM_V = bytes(',"v":{"id":');
const VALUE_HEAD = bytes('{"value":{"f":[');
const VALUE_ID = bytes('],"id":');
const VALUE_V = bytes(',"v":');
const RECORD_HEAD = bytes('{"record":{"process_id":');
const RECORD_FLAGS = bytes(',"flags":"');
const RECORD_COMPACT = bytes('","compact":{"record":{"id":');
/** compact's key after its record (./compact.ts), and the same without the brace that ends the record */
const SKELETON_AFTER_RECORD = bytes('},"skeleton":');
const SKELETON_KEY = bytes(',"skeleton":');
const NULL = bytes("null");

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const RBRACE = 125;
const LBRACE = 123;
const ZERO = 48;
const NINE = 57;

/** End of `word` if the bytes at `i` are it, else -1. */
function lit(b: Buffer, i: number, end: number, word: Buffer): number {
  if (i < 0 || i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
  return i + word.length;
}

/** end of the number `uint` read last */
let numEnd = -1;

/**
 * A whole number as `JSON.stringify` writes a safe integer ≥ 0 (plain digits, no leading zero, at most 15), its end
 * in `numEnd`; else -1 (the `JSON.parse` path reads it).
 */
function uint(b: Buffer, i: number, end: number): number {
  if (i < 0) return -1;
  let j = i;
  let n = 0;
  while (j < end && j - i < 16) {
    const c = b[j] as number;
    if (c < ZERO || c > NINE) break;
    n = n * 10 + (c - ZERO);
    j++;
  }
  const digits = j - i;
  if (digits === 0 || digits > 15 || (digits > 1 && b[i] === ZERO)) return -1;
  numEnd = j;
  return n;
}

/** A number ends where its value does: at the `,` or `}` after it. */
const endsValue = (b: Buffer, j: number): boolean => b[j] === COMMA || b[j] === RBRACE;

/**
 * The kind of the line at [s, e) of `b` and, in `out`, what the reader keeps of it: `ITEM`, `VALUE`, `RECORD`, or
 * `OTHER` (any other line, or one whose head is not as flowrules writes it).
 */
export function headOf(b: Buffer, s: number, e: number, out: Head): number {
  // a line flowrules writes is one object, its members written without whitespace
  if (e - s < 16 || b[s] !== LBRACE || b[e - 1] !== RBRACE) return OTHER;
  const k = b[s + 2];
  if (k === 105) return item(b, s, e, out);
  if (k === 118) return value(b, s, e, out);
  if (k === 114) return record(b, s, e, out);
  return OTHER;
}

/** `{"item":{"l":N,"p":N,"v":{"id":N,…}}}` */
function item(b: Buffer, s: number, e: number, out: Head): number {
  const l = uint(b, lit(b, s, e, ITEM_HEAD), e);
  if (l < 0) return OTHER;
  const p = uint(b, lit(b, numEnd, e, ITEM_P), e);
  if (p < 0) return OTHER;
  const id = uint(b, lit(b, numEnd, e, ITEM_V), e);
  if (id <= 0 || !endsValue(b, numEnd)) return OTHER;
  out.l = l;
  out.p = p;
  out.id = id;
  return ITEM;
}

/** `{"value":{"f":[N,N,N],"id":N,"v":null}}` or `…"v":{…}}}` */
function value(b: Buffer, s: number, e: number, out: Head): number {
  const f0 = uint(b, lit(b, s, e, VALUE_HEAD), e);
  if (f0 < 0 || b[numEnd] !== COMMA) return OTHER;
  const f1 = uint(b, numEnd + 1, e);
  if (f1 < 0 || b[numEnd] !== COMMA) return OTHER;
  const f2 = uint(b, numEnd + 1, e);
  if (f2 < 0) return OTHER;
  const id = uint(b, lit(b, numEnd, e, VALUE_ID), e);
  if (id < 0) return OTHER;
  const v = lit(b, numEnd, e, VALUE_V);
  if (v < 0 || !(lit(b, v, e, NULL) === e - 2 || b[v] === LBRACE)) return OTHER;
  out.f0 = f0;
  out.f1 = f1;
  out.f2 = f2;
  out.id = id;
  return VALUE;
}

/** A string as written with no escape in it (flags, a skeleton's key), its end in `numEnd`; undefined otherwise. */
function plainString(b: Buffer, i: number, end: number): string | undefined {
  if (i < 0) return undefined;
  for (let j = i; j < end; j++) {
    const c = b[j] as number;
    if (c === QUOTE) {
      numEnd = j + 1;
      return b.toString("utf8", i, j);
    }
    if (c === BACKSLASH || c < 0x20) return undefined;
  }
  return undefined;
}

/**
 * `{"record":{"process_id":N,"flags":"…","compact":{"record":{"id":N,…},"skeleton":…,…}}}`: a record written
 * through (`"written":true`, our own writes: few) goes the `JSON.parse` path, for its last_updated_time. The
 * skeleton's key is found without walking the record: the first `},"skeleton":` of the line and its last
 * `,"skeleton":` must be one and the same (a key inside the record before it, or inside the values after it, would
 * make them differ: then the `JSON.parse` path reads it).
 */
function record(b: Buffer, s: number, e: number, out: Head): number {
  const pid = uint(b, lit(b, s, e, RECORD_HEAD), e);
  if (pid < 0) return OTHER;
  const flags = plainString(b, lit(b, numEnd, e, RECORD_FLAGS), e);
  if (flags === undefined) return OTHER;
  const id = uint(b, lit(b, numEnd - 1, e, RECORD_COMPACT), e);
  if (id < 0 || !endsValue(b, numEnd)) return OTHER;
  const line = b.subarray(s, e);
  const first = line.indexOf(SKELETON_AFTER_RECORD, numEnd - s);
  if (first < 0 || line.lastIndexOf(SKELETON_KEY) !== first + 1) return OTHER;
  const at = s + first + SKELETON_AFTER_RECORD.length;
  let skeleton: string | null;
  if (lit(b, at, e, NULL) >= 0) {
    skeleton = null;
    numEnd = at + NULL.length;
  } else {
    if (b[at] !== QUOTE) return OTHER;
    const key = plainString(b, at + 1, e);
    if (key === undefined) return OTHER;
    skeleton = key;
  }
  if (!endsValue(b, numEnd)) return OTHER;
  out.process_id = pid;
  out.flags = flags;
  out.id = id;
  out.skeleton = skeleton;
  return RECORD;
}
