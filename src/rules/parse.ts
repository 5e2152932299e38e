/** Parses one rule file as YAML, keeping what is needed to point messages at line:col. */
import { LineCounter, parseDocument } from "yaml";
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

export function parseRuleFile(file: string, text: string): ParsedFile {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, keepSourceTokens: true, prettyErrors: false, uniqueKeys: true });
  const src: SourceFile = { file, text, doc, lines };
  const diagnostics: Diagnostic[] = [];
  const flowReported = new Set<number>();
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
    diagnostics.push({
      ...posAt(src, e.pos[0]),
      severity: "error",
      code: e.code === "DUPLICATE_KEY" ? "duplicate-key" : "yaml",
      message: yamlMessage(e.code, e.message, text, e.pos[0]),
    });
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
    diagnostics.push({ ...posAt(src, 0), severity: "error", code: "yaml", message: `YAML: ${(err as Error).message}` });
    return { src, diagnostics };
  }
  return { src, data, diagnostics };
}
