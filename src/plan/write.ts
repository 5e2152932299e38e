/**
 * The plan file's one writer (docs/design.md, "The JSON plan"): the plan with its digest, two-space indented, keys in
 * the schema's order, a newline at the end. `plan --out`, `apply --auto-approve` and the JSON view all take their
 * bytes from `planFileChunks`, so the file and the view cannot differ.
 */
import { withDigest } from "./digest.js";
import type { Plan, SignedPlan } from "./types.js";
import { visibleJson } from "../text/visible-json.js";
import { writeFileAtomic } from "../fs/write-file.js";

/**
 * Changes stringified at once. Each batch's text stays below V8's large-object size (~128 KB; a change is ~1.4 KB as
 * a two-byte string), so one still being written when a scavenge comes is copied, not promoted whole into the old
 * generation.
 */
const WRITE_BATCH = 50;
/** Report rows stringified at once: a row is a few columns (~100 bytes), the same bound as a batch of changes. */
const ROW_BATCH = 500;
/** Pieces are gathered up to this size before they are handed on: one write per piece would be thousands of writes. */
const PIECE = 64 * 1024;

/** Writes one value (at `depth`, its first line not indented) piece by piece. */
type Streamer = (value: unknown, depth: number) => Generator<string>;

const pad = (depth: number): string => " ".repeat(2 * depth);

/**
 * JSON.stringify(value, null, 2) as it reads `depth` levels down: every line after the first indented by the depth.
 * A newline in that text is always layout (JSON escapes the ones inside strings), so indenting it is exact.
 */
function stringifyAt(value: unknown, depth: number): string {
  const text = JSON.stringify(value, null, 2) ?? "null";
  return depth === 0 ? text : text.replaceAll("\n", `\n${pad(depth)}`);
}

/**
 * An array at `depth`, its elements a batch at a time (the same bytes as stringifyAt), or each through `element` when
 * an element is itself large (a report and its rows).
 */
function arrayStreamer(batch: number, element?: Streamer): Streamer {
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
      // read by index, not slice(): the rows of a report may be materialised only as they are read (./lazy-rows.ts)
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
function objectStreamer(streamed: Readonly<Record<string, Streamer>>): Streamer {
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

const rowsStreamer = arrayStreamer(ROW_BATCH);
const reportStreamer = objectStreamer({ rows: rowsStreamer });
const planStreamer = objectStreamer({
  changes: arrayStreamer(WRITE_BATCH),
  reports: arrayStreamer(1, reportStreamer),
});

/** Pieces gathered to about PIECE characters, each made visible (src/text/visible-json.ts). */
function* gathered(pieces: Iterable<string>): Generator<string> {
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

/**
 * The file's text in pieces (the same bytes as `JSON.stringify(signed, null, 2)` and a newline): a batch of changes,
 * a batch of a report's rows at a time, so a plan of 100,000 changes or a report of 250,000 rows is never held as one
 * string, and a reader that is slow (a pipe) holds the writer back instead of the plan queuing in memory. Characters
 * a terminal would act on are written as `\uNNNN` (src/text/visible-json.ts): the same values, shown by `cat
 * plan.json` without effect.
 */
export function* planFileChunks(signed: SignedPlan): Generator<string> {
  yield* gathered(
    (function* () {
      yield* planStreamer(signed, 0);
      yield "\n";
    })(),
  );
}

/** The whole file as one string (`show`, tests; a run writes planFileChunks instead). */
export function planFileText(plan: Plan): string {
  return [...planFileChunks(withDigest(plan))].join("");
}

/**
 * Writes the plan file and returns the plan as signed in it, through the atomic writer (src/fs/write-file.ts): a
 * plan that fails half-way (disk full, a crash) leaves the previous file whole, a symbolic link
 * has the file it leads to replaced, and a folder, device or FIFO at the path is refused in one line.
 */
export async function writePlanFile(file: string, plan: Plan, signed = withDigest(plan)): Promise<SignedPlan> {
  await writeFileAtomic(file, planFileChunks(signed));
  return signed;
}
