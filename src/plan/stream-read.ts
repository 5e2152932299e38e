/**
 * The scanner under the plan reader (read.ts): a JSON object file read as a stream, never held whole. Each top-level
 * value is handed over as text, or, for an array, element by element, so memory grows with what the reader keeps,
 * not with the file's text and its parse tree. Values are parsed by the caller with JSON.parse, so they are exactly
 * those of a whole-file parse; the scanner itself checks only the structure between them.
 */
import { createReadStream } from "node:fs";
import { visibleJson } from "../text/visible-json.js";

export type Mode = "skip" | "whole" | "elements";

/** The file is not a well-formed JSON object with distinct keys; `offset` is the byte where that showed. */
export class JsonScanError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);

/**
 * A top-level key longer than this is no key flowrules writes (the longest is a few words): refused there, so a
 * hostile file's key is never gathered whole (an array of its bytes grew to gigabytes) nor printed.
 */
export const MAX_KEY_BYTES = 1024;

/** Characters of a key a message quotes: the rest is counted, not shown. */
const KEY_SHOWN = 40;

/**
 * A key from the file as a message quotes it: on one line, bounded, every control or reordering character shown as an
 * escape (`"ab\u001b[2K…" (300 characters)`), so a hostile key can neither flood nor steer the terminal.
 */
export function quotedKey(key: string): string {
  const chars = Array.from(key);
  const shown = chars.length > KEY_SHOWN ? `${chars.slice(0, KEY_SHOWN).join("")}…` : key;
  const more = chars.length > KEY_SHOWN ? ` (${chars.length} characters)` : "";
  return `${visibleJson(JSON.stringify(shown))}${more}`;
}

/**
 * Scans a JSON object file. For each top-level key, `mode(key)` says whether to skip its value, hand it over whole
 * (`onValue`, its text) or, for an array, element by element (`onElement`). Throws JsonScanError on anything but a
 * well-formed object with distinct keys.
 */
export async function scan(
  file: string,
  mode: (key: string) => Mode,
  onValue: (key: string, text: string) => void,
  onElement: (key: string, text: string, index: number) => void,
  chunkBytes: number,
  where: {
    /** where each top-level value begins (the byte after its key's colon) */
    onValueStart?: (key: string, offset: number) => void;
    /** later passes: scan only the array of `key` that begins at `offset`, and stop at its end */
    array?: { key: string; offset: number };
  } = {},
): Promise<void> {
  type St =
    | "start"
    | "key-or-end"
    | "key-next"
    | "key"
    | "colon"
    | "value"
    | "array-open"
    | "elem-or-end"
    | "elem"
    | "after-value"
    | "after-elem"
    | "end";
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
          if (depth === 0)
            end = i; // closes the enclosing container: a number or literal ended just before
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
          key = parseKey(Buffer.from(keyBytes).toString("utf8"), base + i);
          if (keys.has(key)) throw new JsonScanError(`the key ${quotedKey(key)} appears twice`, base + i);
          keys.add(key);
          st = "colon";
          i += 1;
          continue;
        }
        if (keyBytes.length >= MAX_KEY_BYTES)
          throw new JsonScanError(`a key longer than ${MAX_KEY_BYTES} bytes`, base + i);
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
          if (b !== 0x7b) throw new JsonScanError("not an object", base + i);
          st = "key-or-end";
          break;
        case "key-or-end":
        case "key-next":
          if (b === 0x7d && st === "key-or-end") st = "end";
          else if (b === 0x22) {
            st = "key";
            keyBytes = [];
          } else throw new JsonScanError("expected a key", base + i);
          break;
        case "colon":
          if (b !== 0x3a) throw new JsonScanError("expected a colon", base + i);
          where.onValueStart?.(key, base + i + 1);
          current = mode(key);
          st = current === "elements" ? "array-open" : "value";
          break;
        case "array-open":
          if (b !== 0x5b) throw new JsonScanError("expected an array", base + i);
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
          else throw new JsonScanError("expected , or }", base + i);
          break;
        case "after-elem":
          if (b === 0x2c) st = "elem";
          else if (b === 0x5d) {
            if (where.array) {
              stream.destroy();
              return; // the array is read: the rest of the file was checked by the first pass
            }
            st = "after-value";
          } else throw new JsonScanError("expected , or ]", base + i);
          break;
        case "end":
          throw new JsonScanError("text after the object", base + i);
      }
      i += 1;
    }
    if (capturing) parts.push(Buffer.from(chunk.subarray(from)));
    base += chunk.length;
  }
  if (st !== "end") throw new JsonScanError("Unexpected end of JSON input", base);
}

function parseKey(inner: string, offset: number): string {
  try {
    return JSON.parse(`"${inner}"`) as string;
  } catch {
    throw new JsonScanError("a key that is not a valid JSON string", offset);
  }
}

/**
 * The values of a few top-level keys of a JSON object file, each parsed whole, the others scanned past (`show` reads
 * the `compare` and `impact` of a `plan --compare` file this way, src/plan/compare-schema.ts). Undefined when the
 * file is no well-formed object.
 */
export async function readTopLevelKeys(
  file: string,
  keys: readonly string[],
  chunkBytes = 256 * 1024,
): Promise<Record<string, unknown> | undefined> {
  const out: Record<string, unknown> = {};
  try {
    await scan(
      file,
      (k) => (keys.includes(k) ? "whole" : "skip"),
      (k, text) => void (out[k] = JSON.parse(text)),
      () => undefined,
      chunkBytes,
    );
    return out;
  } catch {
    return undefined;
  }
}
