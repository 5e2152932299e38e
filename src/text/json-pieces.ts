/**
 * JSON text in pieces: the bytes of JSON.stringify(value, null, 2), with the arrays named written element by element
 * (a batch at a time), so a long array is never held as one string. The plan's writer (src/plan/write.ts) and the
 * report files (src/render/report) share it.
 */
import { visibleJson } from "./visible-json.js";

/** Pieces are gathered up to this size before they are handed on: one write per piece would be thousands of writes. */
const PIECE = 64 * 1024;

/** Writes one value (at `depth`, its first line not indented) piece by piece. */
export type Streamer = (value: unknown, depth: number) => Generator<string>;

const pad = (depth: number): string => " ".repeat(2 * depth);

/**
 * JSON.stringify(value, null, 2) as it reads `depth` levels down: every line after the first indented by the depth.
 * Written inside `depth` arrays, the value is indented by JSON.stringify itself; the arrays' own lines are cut off
 * (line i of the head is pad(i) + "[", the value's first line starts after pad(depth); the tail mirrors the head
 * without that pad), so the text is not copied again to be indented.
 */
function stringifyAt(value: unknown, depth: number): string {
  if (depth === 0) return JSON.stringify(value, null, 2) ?? "null";
  let wrapped: unknown = value === undefined ? null : value;
  for (let i = 0; i < depth; i++) wrapped = [wrapped];
  const text = JSON.stringify(wrapped, null, 2);
  const tail = depth * (depth + 1);
  return text.slice(tail + 2 * depth, text.length - tail);
}

/**
 * An array at `depth`, its elements a batch at a time (the same bytes as stringifyAt), or each through `element` when
 * an element is itself large (a report and its rows).
 */
export function arrayStreamer(batch: number, element?: Streamer): Streamer {
  return function* (value, depth) {
    const items = value as readonly unknown[];
    if (items.length === 0) {
      yield "[]";
      return;
    }
    yield "[\n";
    for (let i = 0; i < items.length; i += batch) {
      if (i > 0) yield ",\n";
      if (element) {
        yield pad(depth + 1);
        yield* element(items[i], depth + 1);
        continue;
      }
      // read by index, not slice(): the rows of a report may be made only as they are read (src/plan/lazy-rows.ts)
      const some: unknown[] = [];
      for (let k = i; k < Math.min(i + batch, items.length); k++) some.push(items[k]);
      // `[\n  a,\n  b\n]` at depth d - 1 has its elements at depth d: its brackets cut off, they are the elements' text
      const text = stringifyAt(some, depth);
      yield text.slice(2, text.length - 2 - 2 * depth);
    }
    yield `\n${pad(depth)}]`;
  };
}

/**
 * An object at `depth` whose keys named in `streamed` (when arrays) are written by their streamers, the rest at once.
 * The marker stands in for a streamed value while the rest is stringified; it is found after its key at the start of
 * a line, which no text inside a string can be.
 */
export function objectStreamer(streamed: Readonly<Record<string, Streamer>>): Streamer {
  return function* (value, depth) {
    const object = value as Record<string, unknown>;
    const marked: Record<string, unknown> = { ...object };
    const keys = Object.keys(streamed).filter((k) => Array.isArray(object[k]));
    for (const k of keys) marked[k] = MARKER;
    let text = stringifyAt(marked, depth);
    const cuts = keys
      .map((k) => {
        const line = `\n${pad(depth + 1)}${JSON.stringify(k)}: `;
        const at = text.indexOf(`${line}${JSON.stringify(MARKER)}`);
        if (at < 0) throw new Error(`the plan writer lost the place of "${k}"`);
        return { k, at: at + line.length };
      })
      .sort((a, b) => a.at - b.at);
    let from = 0;
    for (const { k, at } of cuts) {
      yield text.slice(from, at);
      const streamer = streamed[k];
      if (streamer) yield* streamer(object[k], depth + 1);
      from = at + JSON.stringify(MARKER).length;
    }
    yield text.slice(from);
    text = "";
  };
}

const MARKER = "\u0001flowrules-streamed\u0001";

/** Pieces gathered to about PIECE characters, each made visible (src/text/visible-json.ts). */
export function* gathered(pieces: Iterable<string>): Generator<string> {
  let buf: string[] = [];
  let size = 0;
  for (const p of pieces) {
    buf.push(p);
    size += p.length;
    if (size >= PIECE) {
      yield visibleJson(buf.join(""));
      buf = [];
      size = 0;
    }
  }
  if (size > 0) yield visibleJson(buf.join(""));
}
