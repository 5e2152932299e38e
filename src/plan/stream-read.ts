/**
 * A plan file read as a stream, for plans of 100,000 changes: the file is scanned (never held whole), each change is
 * parsed, checked and hashed on its own and kept as a compact record, so memory grows with what apply keeps, not
 * with the file's text and its parse tree.
 *
 * The digest is sha256 over the canonical JSON (keys sorted), which may order the top-level keys differently from
 * the file: a first pass keeps the small top-level values, then one pass per large array (changes, reports) feeds
 * its elements to the hash in canonical order. Each element is parsed with JSON.parse, so values are exactly those
 * of a whole-file parse.
 *
 * Anything unusual (a syntax error, a duplicate key, a value failing its check) returns `undefined`: the caller then
 * reads the file whole, which reports the problem in the usual words. Streaming is the fast path for good plans only.
 */
import { createReadStream } from "node:fs";
import type { z } from "zod";
import { CanonicalHasher, canonicalKeyOrder } from "./digest.js";
import { ChangeSchema, ReportSchema, SignedPlanSchema } from "./schema.js";
import type { PlanChange, PlanFile } from "./types.js";

/** Top-level keys whose arrays are read element by element. */
const STREAMED = new Set(["changes", "reports"]);

type Mode = "skip" | "whole" | "elements";

class NotStreamable extends Error {}

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);

/**
 * Scans a JSON object file. For each top-level key, `mode(key)` says whether to skip its value, hand it over whole
 * (`onValue`, its text) or, for an array, element by element (`onElement`). Throws NotStreamable on anything but a
 * well-formed object with distinct keys.
 */
async function scan(
  file: string,
  mode: (key: string) => Mode,
  onValue: (key: string, text: string) => void,
  onElement: (key: string, text: string, index: number) => void,
  chunkBytes: number,
  where: {
    /** pass 1: where each array value skipped begins (the byte after its key's colon) */
    onSkipped?: (key: string, offset: number) => void;
    /** later passes: scan only the array of `key` that begins at `offset`, and stop at its end */
    array?: { key: string; offset: number };
  } = {},
): Promise<void> {
  type St = "start" | "key-or-end" | "key-next" | "key" | "colon" | "value" | "array-open" | "elem-or-end" | "elem" | "after-value" | "after-elem" | "end";
  let st: St = where.array ? "array-open" : "start";
  let key = "";
  const keys = new Set<string>();
  let keyBytes: number[] = [];
  let keyEsc = false;
  let current: Mode = where.array ? "elements" : "skip";
  if (where.array) key = where.array.key;
  let index = 0;
  let base = where.array?.offset ?? 0; // file offset of the current chunk
  // the value or element being captured: its pieces so far, nesting depth, string state
  let parts: Buffer[] = [];
  let capturing = false;
  let depth = 0;
  let inStr = false;
  let esc = false;

  const stream = createReadStream(file, { highWaterMark: chunkBytes, start: base });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = capturing ? 0 : -1; // where the capture starts within this chunk
    let i = 0;
    while (i < chunk.length) {
      const b = chunk[i] as number;
      if (capturing) {
        let end = -1; // the index just past the value
        if (inStr) {
          if (esc) esc = false;
          else if (b === 0x5c) esc = true;
          else if (b === 0x22) {
            inStr = false;
            if (depth === 0) end = i + 1;
          }
        } else if (b === 0x22) inStr = true;
        else if (b === 0x7b || b === 0x5b) depth += 1;
        else if (b === 0x7d || b === 0x5d) {
          if (depth === 0) end = i; // closes the enclosing container: a number or literal ended just before
          else if (--depth === 0) end = i + 1;
        } else if (depth === 0 && (b === 0x2c || WS.has(b))) end = i;
        if (end < 0) {
          i += 1;
          continue;
        }
        capturing = false;
        // most values lie within one chunk: decoded in place, without a copy
        let text: string;
        if (parts.length === 0) text = chunk.toString("utf8", from, end);
        else {
          parts.push(chunk.subarray(from, end));
          text = Buffer.concat(parts).toString("utf8");
          parts = [];
        }
        if (st === "value") {
          if (current === "whole") onValue(key, text);
          st = "after-value";
        } else {
          if (current === "elements") onElement(key, text, index);
          index += 1;
          st = "after-elem";
        }
        i = end; // the byte at `end` belongs to the enclosing structure
        continue;
      }
      if (st === "key") {
        if (keyEsc) keyEsc = false;
        else if (b === 0x5c) keyEsc = true;
        else if (b === 0x22) {
          key = parseOrFail(`"${Buffer.from(keyBytes).toString("utf8")}"`) as string;
          if (keys.has(key)) throw new NotStreamable("duplicate key");
          keys.add(key);
          st = "colon";
          i += 1;
          continue;
        }
        keyBytes.push(b);
        i += 1;
        continue;
      }
      if (WS.has(b)) {
        i += 1;
        continue;
      }
      switch (st) {
        case "start":
          if (b !== 0x7b) throw new NotStreamable("not an object");
          st = "key-or-end";
          break;
        case "key-or-end":
        case "key-next":
          if (b === 0x7d && st === "key-or-end") st = "end";
          else if (b === 0x22) {
            st = "key";
            keyBytes = [];
          } else throw new NotStreamable("expected a key");
          break;
        case "colon":
          if (b !== 0x3a) throw new NotStreamable("expected a colon");
          current = mode(key);
          if (current === "skip") where.onSkipped?.(key, base + i + 1);
          st = current === "elements" ? "array-open" : "value";
          break;
        case "array-open":
          if (b !== 0x5b) throw new NotStreamable("expected an array");
          st = "elem-or-end";
          index = 0;
          break;
        case "elem-or-end":
          if (b === 0x5d) {
            if (where.array) {
              stream.destroy();
              return;
            }
            st = "after-value";
            break;
          }
          st = "elem";
          continue; // the same byte again, as the element's first
        case "value":
        case "elem":
          parts = [];
          capturing = true;
          depth = 0;
          inStr = false;
          esc = false;
          from = i;
          continue; // the first byte is scanned as part of the value
        case "after-value":
          if (b === 0x2c) st = "key-next";
          else if (b === 0x7d) st = "end";
          else throw new NotStreamable("expected , or }");
          break;
        case "after-elem":
          if (b === 0x2c) st = "elem";
          else if (b === 0x5d) {
            if (where.array) {
              stream.destroy();
              return; // the array is read: the rest of the file was checked by the first pass
            }
            st = "after-value";
          } else throw new NotStreamable("expected , or ]");
          break;
        case "end":
          throw new NotStreamable("text after the object");
      }
      i += 1;
    }
    if (capturing) parts.push(Buffer.from(chunk.subarray(from)));
    base += chunk.length;
  }
  if (st !== "end") throw new NotStreamable("truncated");
}

function parseOrFail(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new NotStreamable("invalid JSON");
  }
}

function ok<T>(r: z.ZodSafeParseResult<T>): T {
  if (!r.success) throw new NotStreamable("invalid");
  return r.data;
}

/** Shared empty objects: a compact change keeps what apply sends and checks, not what the plan shows. */
const NOTHING: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export type CompactCheck = (change: PlanChange) => boolean;

/**
 * Reads a plan file as a stream; undefined when the file is not a plan that passes every check (the whole-file
 * reader then says why). With `compact`, `before`, `after` and `instance_name` of each change (shown by plan views,
 * never used by apply) are left out, and the reports are checked and left out.
 */
export async function streamPlanFile(
  file: string,
  check: CompactCheck,
  compact: boolean,
  /** read size; tests use a few bytes to cross every boundary */
  chunkBytes = 256 * 1024,
): Promise<{ plan: PlanFile; digest: string } | undefined> {
  try {
    // 1. the small top-level values
    const header: Record<string, unknown> = {};
    const present: string[] = [];
    const offsets = new Map<string, number>();
    await scan(
      file,
      (k) => {
        present.push(k);
        return STREAMED.has(k) ? "skip" : "whole";
      },
      (k, text) => void (header[k] = parseOrFail(text)),
      () => undefined,
      chunkBytes,
      { onSkipped: (k, offset) => void offsets.set(k, offset) },
    );
    if (!present.includes("changes")) return undefined;
    const signed = ok(SignedPlanSchema.safeParse({ ...header, changes: [], reports: [] }));
    if (signed.errors.length > 0) return undefined;

    // 2. the hash in canonical key order, the arrays read element by element
    const hasher = new CanonicalHasher();
    const keys = canonicalKeyOrder(present.filter((k) => k !== "digest"));
    const changes: PlanChange[] = [];
    const reports: PlanFile["reports"] = [];
    const seen = new Set<string>();
    const intern = new Map<string, string>();
    const same = (s: string): string => {
      const known = intern.get(s);
      if (known !== undefined) return known;
      intern.set(s, s);
      return s;
    };
    hasher.text("{");
    for (const [n, k] of keys.entries()) {
      hasher.key(n, k);
      if (!STREAMED.has(k)) {
        hasher.value(header[k]);
        continue;
      }
      hasher.text("[");
      await scan(
        file,
        (key) => (key === k ? "elements" : "skip"),
        () => undefined,
        (_key, text, i) => {
          const raw = parseOrFail(text);
          hasher.element(i, raw);
          if (k === "reports") {
            const r = ok(ReportSchema.safeParse(raw));
            if (!compact) reports.push(r);
            return;
          }
          const c = ok(ChangeSchema.safeParse(raw));
          if (!check(c) || seen.has(c.id)) throw new NotStreamable("invalid change");
          seen.add(c.id);
          changes.push(compact ? { ...c, rule: same(c.rule), kind: same(c.kind), instance_name: "", before: NOTHING, after: NOTHING } : c);
        },
        chunkBytes,
        { array: { key: k, offset: offsets.get(k) ?? 0 } },
      );
      hasher.text("]");
    }
    hasher.text("}");
    const digest = hasher.digest();
    if (digest !== signed.digest) return undefined;
    return { plan: { ...signed, changes, reports }, digest };
  } catch (err) {
    if (err instanceof NotStreamable) return undefined;
    throw err;
  }
}

/**
 * The values of a few top-level keys of a JSON object file, each parsed whole, the others scanned past (`show` reads
 * the `compare` and `impact` of a `plan --compare` file this way, src/plan/compare-schema.ts). Undefined when the
 * file is no well-formed object.
 */
export async function readTopLevelKeys(file: string, keys: readonly string[], chunkBytes = 256 * 1024): Promise<Record<string, unknown> | undefined> {
  const out: Record<string, unknown> = {};
  try {
    await scan(file, (k) => (keys.includes(k) ? "whole" : "skip"), (k, text) => void (out[k] = JSON.parse(text)), () => undefined, chunkBytes);
    return out;
  } catch {
    return undefined;
  }
}
