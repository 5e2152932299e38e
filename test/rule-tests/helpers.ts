/** Helpers for the rule-test runner tests: captured command IO, temp folders of files, an XML well-formedness check. */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { CommandIO } from "../../src/log/command-io.js";
import { tempDir } from "../helpers/temp.js";

export interface Captured {
  io: CommandIO;
  out: () => string;
  err: () => string;
}

export function captureIO(env: NodeJS.ProcessEnv = {}): Captured {
  let out = "";
  let err = "";
  return {
    io: { stdout: (s) => void (out += s), stderr: (s) => void (err += s), env, stdoutIsTTY: false, stderrIsTTY: false },
    out: () => out,
    err: () => err,
  };
}

/** Writes `files` (relative path → text) into a fresh temp folder; returns the folder. */
export async function tempFiles(files: Record<string, string>): Promise<string> {
  const dir = await tempDir("flowrules-testing-");
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITY: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function unescape(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ENTITY[e] ?? "");
}

/**
 * A strict little XML reader for what JUnit files contain (declaration, elements, attributes, text): it throws on
 * anything not well-formed — unbalanced or crossed tags, unquoted attributes, a bare `&` or `<` in text.
 */
export function parseXml(xml: string): XmlElement {
  const decl = /^<\?xml[^?]*\?>\s*/.exec(xml);
  if (!decl) throw new Error("no XML declaration");
  let i = decl[0].length;
  const root: XmlElement = { name: "#document", attrs: {}, children: [], text: "" };
  const stack: XmlElement[] = [root];
  while (i < xml.length) {
    const top = stack[stack.length - 1];
    if (!top) throw new Error("stack underflow");
    if (xml.startsWith("</", i)) {
      const m = /^<\/([A-Za-z_][\w.-]*)\s*>/.exec(xml.slice(i));
      if (!m || m[1] !== top.name) throw new Error(`unexpected closing tag at ${i}: ${xml.slice(i, i + 30)}`);
      stack.pop();
      i += m[0].length;
    } else if (xml[i] === "<") {
      const m = /^<([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.:-]*="[^"<]*")*)\s*(\/?)>/.exec(xml.slice(i));
      if (!m || m[1] === undefined) throw new Error(`bad tag at ${i}: ${xml.slice(i, i + 40)}`);
      const attrs: Record<string, string> = {};
      for (const a of (m[2] ?? "").matchAll(/([A-Za-z_][\w.:-]*)="([^"]*)"/g)) {
        if (a[1] === undefined || a[1] in attrs) throw new Error(`duplicate attribute ${a[1]}`);
        if (/&(?!(amp|lt|gt|quot|apos);)/.test(a[2] ?? "")) throw new Error(`bare & in attribute ${a[1]}`);
        attrs[a[1]] = unescape(a[2] ?? "");
      }
      const el: XmlElement = { name: m[1], attrs, children: [], text: "" };
      top.children.push(el);
      if (m[3] !== "/") stack.push(el);
      i += m[0].length;
    } else {
      const next = xml.indexOf("<", i);
      const text = xml.slice(i, next < 0 ? xml.length : next);
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(text) || text.includes(">")) throw new Error(`unescaped text at ${i}`);
      top.text += unescape(text);
      i = next < 0 ? xml.length : next;
    }
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]?.name ?? "?"}>`);
  const rootEl = root.children[0];
  if (root.children.length !== 1 || !rootEl || root.text.trim() !== "") throw new Error("not exactly one root element");
  return rootEl;
}

export function findAll(el: XmlElement, name: string): XmlElement[] {
  return [...(el.name === name ? [el] : []), ...el.children.flatMap((c) => findAll(c, name))];
}
