/** Maps JSON Pointer paths (from ajv) and offsets (from yaml, jsonata) back to line:col in the rule file. */
import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair } from "#yaml";
import type { SourcePos } from "./types.js";

export interface SourceFile {
  file: string;
  text: string;
  doc: Document.Parsed;
  lines: LineCounter;
}

export function posAt(src: SourceFile, offset: number): SourcePos {
  const { line, col } = src.lines.linePos(Math.max(0, Math.min(offset, src.text.length)));
  return { file: src.file, line, col };
}

export function splitPointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

export interface Located {
  node?: Node;
  /** the key/value pair holding the node, when it is the value of a mapping key */
  pair?: Pair;
}

function deref(src: SourceFile, n: unknown): Node | undefined {
  if (isAlias(n)) return n.resolve(src.doc) ?? undefined;
  return isScalar(n) || isMap(n) || isSeq(n) ? n : undefined;
}

function keyText(k: unknown): string | undefined {
  if (isScalar(k)) return String(k.value);
  return undefined;
}

/** Finds the YAML node at a path of keys/indexes; stops at the deepest node that exists. */
export function locate(src: SourceFile, path: ReadonlyArray<string | number>): Located {
  let node = deref(src, src.doc.contents);
  let pair: Pair | undefined;
  for (const seg of path) {
    if (isMap(node)) {
      const found = node.items.find((it) => isPair(it) && keyText(it.key) === String(seg));
      if (!found) break;
      pair = found;
      node = deref(src, found.value) ?? undefined;
      if (!node) break;
    } else if (isSeq(node)) {
      const item: unknown = node.items[Number(seg)];
      const next = deref(src, item);
      if (!next) break;
      pair = undefined;
      node = next;
    } else {
      break;
    }
  }
  return { node, pair };
}

function nodeStart(n: Node | undefined): number | undefined {
  return n?.range ? n.range[0] : undefined;
}

/** Position of the value at `path` (falls back to its key, then to the start of the file). */
export function posOfValue(src: SourceFile, path: ReadonlyArray<string | number>): SourcePos {
  const { node, pair } = locate(src, path);
  const off = nodeStart(node) ?? (pair && isScalar(pair.key) ? nodeStart(pair.key) : undefined) ?? 0;
  return posAt(src, off);
}

/** Position of the key `key` inside the mapping at `path`. */
export function posOfKey(src: SourceFile, path: ReadonlyArray<string | number>, key: string): SourcePos {
  const { node } = locate(src, path);
  if (isMap(node)) {
    const p = node.items.find((it) => isPair(it) && keyText(it.key) === key);
    const off = p && isScalar(p.key) ? nodeStart(p.key) : undefined;
    if (off !== undefined) return posAt(src, off);
  }
  return posOfValue(src, path);
}

function isWs(c: string | undefined): boolean {
  return c === " " || c === "\n" || c === "\t" || c === "\r";
}

/**
 * Maps an index in a scalar's string value to its place in the file. The value and its source text are aligned
 * greedily (quotes, escapes, block headers and indentation are skipped; folded line breaks match spaces), which is
 * exact for plain and simple quoted scalars and close for block scalars.
 */
export function scalarIndexToPos(src: SourceFile, path: ReadonlyArray<string | number>): (i: number) => SourcePos {
  const { node } = locate(src, path);
  if (!isScalar(node) || typeof node.value !== "string" || !node.range) {
    const p = posOfValue(src, path);
    return () => p;
  }
  const value = node.value;
  const start = node.range[0];
  const end = node.range[1];
  const map: number[] = [];
  let r = start;
  for (let k = 0; k < value.length; k++) {
    const v = value[k];
    while (r < end && src.text[r] !== v && !(isWs(v) && isWs(src.text[r]))) r++;
    if (r >= end) break;
    map[k] = r;
    r++;
  }
  return (i: number) => {
    const off = map[i] ?? (i > 0 && map[i - 1] !== undefined ? (map[i - 1] ?? 0) + 1 : map.length > 0 ? end : start);
    return posAt(src, off);
  };
}
