/**
 * A plan's digest: sha256 over its canonical JSON (keys sorted, `digest` itself left out). `apply` recomputes it to
 * refuse a plan file edited after review. The canonical form is streamed into the hash in chunks, never built as
 * one string: a plan of 100,000 changes would otherwise cost well over 100 MB for the digest alone. `canonicalJson`
 * writes the form piece by piece and is the reference; the hasher builds each element natively (a copy with sorted
 * keys through JSON.stringify), which gives the same text (test/plan/stream-read.test.ts).
 */
import { createHash } from "node:crypto";
import type { Plan, SignedPlan } from "./types.js";
import { isRecord } from "../model/guards.js";

const CHUNK = 64 * 1024;

/** Writes the canonical JSON of `value` to `emit` piece by piece. */
function writeCanonical(value: unknown, emit: (s: string) => void): void {
  if (value === null || typeof value !== "object") {
    emit(JSON.stringify(value) ?? "null");
    return;
  }
  if (Array.isArray(value)) {
    emit("[");
    value.forEach((v, i) => {
      if (i > 0) emit(",");
      writeCanonical(v === undefined ? null : v, emit);
    });
    emit("]");
    return;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  emit("{");
  entries.forEach(([k, v], i) => {
    emit(i > 0 ? `,${JSON.stringify(k)}:` : `${JSON.stringify(k)}:`);
    writeCanonical(v, emit);
  });
  emit("}");
}

export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  writeCanonical(value, (s) => parts.push(s));
  return parts.join("");
}

export function planDigest(plan: Plan | (Plan & { digest?: string })): string {
  const { digest: _ignored, ...rest } = plan as Plan & { digest?: string };
  // the canonical form of the whole plan, fed element by element: the same text as canonicalJson(rest), without
  // building it (or thousands of small strings per change) at 100,000 changes
  const hasher = new CanonicalHasher();
  const fields = rest as Record<string, unknown>;
  hasher.text("{");
  for (const [n, k] of canonicalKeyOrder(Object.keys(fields).filter((k) => fields[k] !== undefined)).entries()) {
    hasher.key(n, k);
    const v = fields[k];
    if (!Array.isArray(v)) {
      hasher.value(v);
      continue;
    }
    hasher.text("[");
    if (k === "reports") v.forEach((x: unknown, i) => hashReport(hasher, i, x));
    else v.forEach((x: unknown, i) => hasher.element(i, x));
    hasher.text("]");
  }
  hasher.text("}");
  return hasher.digest();
}

/** Report rows hashed at once: a few columns each, so a batch's canonical text stays small. */
const ROW_BATCH = 500;

/**
 * The `i`th report, its rows a batch at a time: a report may hold a row per matched instance (250,000 at a million
 * instances), whose canonical copy at once would be a second report in memory. The same text as hasher.element.
 */
function hashReport(hasher: CanonicalHasher, i: number, report: unknown): void {
  const rows = isRecord(report) ? report.rows : undefined;
  if (!isRecord(report) || !Array.isArray(rows)) {
    hasher.element(i, report);
    return;
  }
  if (i > 0) hasher.text(",");
  hasher.text("{");
  const keys = canonicalKeyOrder(Object.keys(report).filter((k) => report[k] !== undefined));
  for (const [n, k] of keys.entries()) {
    hasher.key(n, k);
    if (k !== "rows") {
      hasher.value(report[k]);
      continue;
    }
    hasher.text("[");
    for (let at = 0; at < rows.length; at += ROW_BATCH) {
      // read by index: rows may be materialised only as they are read (src/plan/lazy-rows.ts)
      const some: unknown[] = [];
      for (let r = at; r < Math.min(at + ROW_BATCH, rows.length); r++)
        some.push(rows[r] === undefined ? null : rows[r]);
      // `[a,b]` without its brackets is the elements' text, commas between
      hasher.elementText(at, canonicalText(some).slice(1, -1));
    }
    hasher.text("]");
  }
  hasher.text("}");
}

export function withDigest(plan: Plan): SignedPlan {
  return { ...plan, digest: planDigest(plan) };
}

/** Index-like keys: a plain object keeps them first and in numeric order, whatever the insertion order. */
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;
const INDEXED: unique symbol = Symbol("indexed");

/** Sets `k` as an own key: "__proto__" too, as JSON.parse makes it (an assignment would set the prototype instead). */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === "__proto__")
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * Keys sorted in place by UTF-16 code units, as the default sort orders them: a few keys (an object of a change)
 * by insertion, which allocates nothing where the default sort copies them first.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
}

/**
 * `v` with its objects' keys in sorted order; INDEXED when some key is index-like. An object whose keys are in order
 * already, and whose values need no copy, is given back itself, as is such an array: a plan's change is mostly small
 * objects of one key or of keys in order, so most of it is not copied again just to be hashed.
 */
function sortedCopy(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const c = sortedCopy(x);
      if (c === INDEXED) return INDEXED;
      if (c !== x && out === undefined) out = v.slice(0, i) as unknown[];
      if (out !== undefined) out.push(c);
    }
    return out ?? v;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  // the default sort compares UTF-16 code units, as canonicalJson does, and so does `<`
  let inOrder = true;
  for (let i = 1; i < keys.length && inOrder; i++) inOrder = (keys[i - 1] as string) < (keys[i] as string);
  // only a plain object stands for itself: JSON.stringify would write another (a Date) otherwise than its copy
  const proto: unknown = Object.getPrototypeOf(o);
  if (!inOrder) sortKeys(keys);
  // the copy, once one is needed (the values before the first that needs one are those of `o`)
  let out = inOrder && (proto === Object.prototype || proto === null) ? undefined : {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (INDEX_KEY.test(k)) return INDEXED;
    const x = o[k];
    const c = sortedCopy(x);
    if (c === INDEXED) return INDEXED;
    if (c !== x && out === undefined) {
      out = {};
      for (let j = 0; j < i; j++) setOwn(out, keys[j] as string, o[keys[j] as string]);
    }
    if (out !== undefined) setOwn(out, k, c);
  }
  if (out === undefined) return o;
  return out;
}

/**
 * The canonical JSON of one value: a copy with sorted keys through JSON.stringify's native writer — the same text as
 * canonicalJson without thousands of small strings — or canonicalJson itself for the rare value with index-like keys.
 */
export function canonicalText(v: unknown): string {
  const copy = sortedCopy(v);
  return copy === INDEXED ? canonicalJson(v) : (JSON.stringify(copy) ?? "null");
}

/** Keys in canonical order: by UTF-16 code units, as canonicalJson sorts them. */
export function canonicalKeyOrder(keys: readonly string[]): string[] {
  return [...keys].sort();
}

/**
 * The digest built piece by piece, for a plan read as a stream: the caller feeds the canonical form in order (keys
 * sorted), raw punctuation with `text` and values with `value`. Gives what planDigest gives for the same plan.
 */
export class CanonicalHasher {
  private hash = createHash("sha256");
  private buf = "";

  /** Punctuation and keys: short pieces, gathered before they reach the hash. */
  text(s: string): void {
    this.buf += s;
    if (this.buf.length >= CHUNK) this.flush();
  }

  /**
   * One value of parsed JSON, in canonical form (canonicalText), straight to the hash: joining it to others first
   * would only copy it.
   */
  value(v: unknown): void {
    this.flush();
    this.hash.update(canonicalText(v));
  }

  /** The `n`th key of the object being written (a comma before all but the first). */
  key(n: number, k: string): void {
    this.text(`${n > 0 ? "," : ""}${JSON.stringify(k)}:`);
  }

  /** The `i`th element of the array being written (a comma before all but the first). */
  element(i: number, v: unknown): void {
    if (i > 0) this.text(",");
    this.value(v);
  }

  /** The `i`th element, already in canonical form (canonicalText). */
  elementText(i: number, text: string): void {
    if (i > 0) this.text(",");
    this.flush();
    this.hash.update(text);
  }

  /** Starts again from nothing. */
  reset(): void {
    this.buf = "";
    this.hash = createHash("sha256");
  }

  digest(): string {
    this.flush();
    return `sha256:${this.hash.digest("hex")}`;
  }

  private flush(): void {
    if (this.buf.length === 0) return;
    this.hash.update(this.buf);
    this.buf = "";
  }
}
