/** Parses one rule file as YAML, keeping what is needed to point messages at line:col. */
import { LineCounter, isMap, isPair, isScalar, isSeq, parseDocument, type Document } from "#yaml";
import type { Diagnostic } from "./types.js";
import { posAt, type SourceFile } from "./positions.js";

export interface ParsedFile {
  src: SourceFile;
  /** the plain JS value; undefined when the YAML had errors */
  data?: unknown;
  diagnostics: Diagnostic[];
}

/** yaml's messages are written for parser authors; these say what to fix. */
function yamlMessage(code: string, message: string, text: string, offset: number): string {
  if (code === "DUPLICATE_KEY") {
    const key = /^\s*"?([^":\n]+)"?\s*:/.exec(text.slice(offset))?.[1]?.trim();
    return key ? `duplicate key "${key}": each key may appear once per mapping` : "duplicate key in mapping";
  }
  // yaml's composer recurses per level: a file nested hundreds deep (hostile or generated) runs out of stack
  if (/Maximum call stack size exceeded/.test(message)) return "nested too deeply: rule files nest a few levels, not hundreds";
  if (code === "TAB_AS_INDENT") return "tab used for indentation: YAML indents with spaces";
  if (code === "UNEXPECTED_TOKEN" && message.startsWith("Unexpected scalar at node end")) {
    return "text after a quoted value: quote the whole value instead (e.g. when: '\"vip\" in tags')";
  }
  if (code === "MULTIPLE_DOCS") return "a rule file holds one YAML document: put further rules in the same `rules:` list";
  if (code === "BLOCK_AS_IMPLICIT_KEY") {
    return "a plain value may not contain \": \"; quote it (e.g. when: 'a: b') or use a block scalar (|)";
  }
  return `YAML: ${message.replace(/\s+at line \d+, column \d+.*$/s, "")}`;
}

/**
 * The key indented deeper than the key of the line holding `offset` (`    workflow: 1042` then `     select: …`), which
 * YAML reads as more of the value above; undefined when no such line follows.
 */
export function deeperKey(text: string, offset: number): { offset: number; message: string } | undefined {
  const lineStart = text.lastIndexOf("\n", Math.max(0, offset - 1)) + 1;
  const lines = text.slice(lineStart).split("\n");
  const first = lines[0] ?? "";
  const indent = (l: string): number => l.length - l.trimStart().length;
  const above = /^\s*(?:-\s+)?([^\s:#][^:#]*):(?:\s|$)/.exec(first);
  if (!above) return undefined;
  // the column keys of that mapping start at (after a "- " it is the key's own column)
  const column = first.indexOf(above[1] ?? "");
  let at = lineStart + first.length + 1;
  for (const line of lines.slice(1)) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) {
      at += line.length + 1;
      continue;
    }
    const key = /^\s*([^\s:#-][^:#]*):(?:\s|$)/.exec(line);
    if (indent(line) <= column || !key) return undefined;
    const n = indent(line);
    return {
      offset: at + n,
      message: `"${(key[1] ?? "").trim()}" is indented ${n} spaces, deeper than "${(above[1] ?? "").trim()}" above it (${column}): keys of one mapping start in the same column, so indent it by ${column}`,
    };
  }
  return undefined;
}

/**
 * yaml notices an unclosed `[` or `{` only where the next block starts; the mistake is at the opener. Scans back
 * for the last opener left unclosed (quotes and comments skipped) so the message points at it.
 */
export function unclosedOpener(text: string, before: number, kind: "[" | "{"): number | undefined {
  const stack: number[] = [];
  for (let i = 0; i < before && i < text.length; i++) {
    const c = text[i];
    if (c === "#" && (i === 0 || /\s/.test(text[i - 1] ?? ""))) {
      while (i < before && text[i] !== "\n") i++;
    } else if ((c === '"' || c === "'") && (i === 0 || /[\s[{,:]/.test(text[i - 1] ?? ""))) {
      const q = c;
      i++;
      while (i < before && text[i] !== q) i += q === '"' && text[i] === "\\" ? 2 : 1;
    } else if (c === "[" || c === "{") {
      stack.push(i);
    } else if ((c === "]" || c === "}") && stack.length > 0) {
      stack.pop();
    }
  }
  return [...stack].reverse().find((i) => text[i] === kind);
}

/** Bounds that keep the checks after parsing fast on any input (a rule file is written by people, in git). */
export const MAX_RULE_FILE_CHARS = 1024 * 1024;
export const MAX_COLLECTION_ENTRIES = 1000;

interface StructureProblem {
  offset: number;
  code: string;
  message: string;
}

/**
 * Keys that repeat an earlier key of the same mapping (equal scalar values, as yaml's own `uniqueKeys` judges them),
 * and lists or mappings too long to check quickly. yaml compares each key with every earlier one, which takes
 * minutes for a mapping of 100,000 keys; this is one pass with a set per mapping, iterative so that depth cannot
 * exhaust the stack.
 */
function structureProblems(doc: Document.Parsed, text: string): StructureProblem[] {
  const out: StructureProblem[] = [];
  const stack: unknown[] = [doc.contents];
  const tooMany = (n: number, what: string, offset: number): void =>
    void out.push({
      offset,
      code: "too-large",
      message: `${what} of ${n} entries: a rule file holds at most ${MAX_COLLECTION_ENTRIES} per list or mapping (split it into several files)`,
    });
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      if (node.items.length > MAX_COLLECTION_ENTRIES) tooMany(node.items.length, "a mapping", node.range?.[0] ?? 0);
      const seen = new Set<unknown>();
      for (const item of node.items) {
        if (!isPair(item)) continue;
        const key: unknown = item.key;
        if (isScalar(key)) {
          const offset = key.range?.[0] ?? 0;
          if (seen.has(key.value)) {
            out.push({ offset, code: "duplicate-key", message: yamlMessage("DUPLICATE_KEY", "Map keys must be unique", text, offset) });
          } else seen.add(key.value);
        } else if (key) stack.push(key);
        stack.push(item.value);
      }
    } else if (isSeq(node)) {
      if (node.items.length > MAX_COLLECTION_ENTRIES) tooMany(node.items.length, "a list", node.range?.[0] ?? 0);
      for (const item of node.items) stack.push(item);
    }
  }
  return out.sort((a, b) => a.offset - b.offset);
}

export function parseRuleFile(file: string, text: string): ParsedFile {
  const lines = new LineCounter();
  if (text.length > MAX_RULE_FILE_CHARS) {
    lines.addNewLine(0);
    const src: SourceFile = { file, text, doc: parseDocument(""), lines };
    const size = `${(text.length / 1024 / 1024).toFixed(1)} MiB`;
    return {
      src,
      diagnostics: [{ ...posAt(src, 0), severity: "error", code: "too-large", message: `the file holds ${size} of text: a rule file may hold at most 1 MiB (split it into several files)` }],
    };
  }
  // duplicate keys are found by structureProblems (linear), not by yaml's uniqueKeys (quadratic)
  const doc = parseDocument(text, { lineCounter: lines, keepSourceTokens: true, prettyErrors: false, uniqueKeys: false });
  const src: SourceFile = { file, text, doc, lines };
  const diagnostics: Diagnostic[] = [];
  const flowReported = new Set<number>();
  const indentReported = new Set<number>();
  for (const e of doc.errors) {
    const flow = /end with an? ([\]}])/.exec(e.message);
    const opener = flow ? unclosedOpener(text, e.pos[0], flow[1] === "]" ? "[" : "{") : undefined;
    if (flow && opener !== undefined) {
      // nested unclosed collections fail together where the next block starts: one mistake, one message
      if (flowReported.has(e.pos[0])) continue;
      flowReported.add(e.pos[0]);
      diagnostics.push({
        ...posAt(src, opener),
        severity: "error",
        code: "yaml",
        message: `unclosed "${text[opener] ?? ""}": close it with "${flow[1] ?? ""}" on the same line or indent its continuation`,
      });
      continue;
    }
    if (e.code === "BLOCK_AS_IMPLICIT_KEY" || e.code === "MULTILINE_IMPLICIT_KEY") {
      // a key indented deeper than the one above reads as the continuation of its value: one message, at the key
      const deeper = deeperKey(text, e.pos[0]);
      if (deeper) {
        if (!indentReported.has(deeper.offset)) {
          indentReported.add(deeper.offset);
          diagnostics.push({ ...posAt(src, deeper.offset), severity: "error", code: "yaml", message: deeper.message });
        }
        continue;
      }
    }
    diagnostics.push({
      ...posAt(src, e.pos[0]),
      severity: "error",
      code: e.code === "DUPLICATE_KEY" ? "duplicate-key" : "yaml",
      message: yamlMessage(e.code, e.message, text, e.pos[0]),
    });
  }
  for (const p of structureProblems(doc, text)) {
    diagnostics.push({ ...posAt(src, p.offset), severity: "error", code: p.code, message: p.message });
  }
  if (diagnostics.length > 0) return { src, diagnostics };
  for (const w of doc.warnings) {
    diagnostics.push({ ...posAt(src, w.pos[0]), severity: "warning", code: "yaml", message: `YAML: ${w.message}` });
  }
  let data: unknown;
  try {
    // aliases are legal YAML, but a tiny file must not expand into gigabytes (billion laughs)
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    const message = (err as Error).message;
    diagnostics.push({
      ...posAt(src, 0),
      severity: "error",
      code: "yaml",
      message: /Excessive alias count/.test(message)
        ? "YAML aliases (*name) expand too far: this looks like a \"billion laughs\" file; use fewer aliases"
        : `YAML: ${message}`,
    });
    return { src, diagnostics };
  }
  return { src, data, diagnostics };
}
