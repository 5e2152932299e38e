/** Reads the CI examples and finds the flowrules command lines in them, for examples.test.ts. */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export const EXAMPLES_DIR = fileURLToPath(new URL("../../examples/ci/", import.meta.url));
/** Deployment examples of `flowrules watch` (Kubernetes, systemd), checked with the same care. */
export const DEPLOY_DIR = fileURLToPath(new URL("../../examples/deploy/", import.meta.url));

export interface Example {
  file: string;
  text: string;
  docs: unknown[];
}

async function walk(dir: string, out: string[]): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else out.push(p);
  }
}

export async function exampleFiles(dir: string = EXAMPLES_DIR): Promise<string[]> {
  const out: string[] = [];
  await walk(dir, out);
  return out.sort();
}

export async function loadYamlExamples(dir: string = EXAMPLES_DIR): Promise<Example[]> {
  const files = (await exampleFiles(dir)).filter((f) => /\.ya?ml$/.test(f));
  const out: Example[] = [];
  for (const file of files) {
    const text = await readFile(file, "utf8");
    const docs = parseAllDocuments(text).map((d) => {
      if (d.errors.length > 0) throw new Error(`${relative(dir, file)}: ${d.errors.map((e) => e.message).join("; ")}`);
      return d.toJS() as unknown;
    });
    out.push({ file: relative(dir, file), text, docs });
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every string an example could run: scalars, plus a container's command and args joined (Kubernetes). */
export function runnableStrings(node: unknown, out: string[] = []): string[] {
  if (typeof node === "string") out.push(node);
  else if (Array.isArray(node)) for (const v of node) runnableStrings(v, out);
  else if (isRecord(node)) {
    const { command, args } = node;
    if (Array.isArray(command) && command.every((c) => typeof c === "string")) {
      const rest = Array.isArray(args) ? args.filter((a): a is string => typeof a === "string") : [];
      out.push([...command, ...rest].join(" "));
    }
    for (const v of Object.values(node)) runnableStrings(v, out);
  }
  return out;
}

/** The flowrules words of a container whose command is the image's CLI (`command: ["flowrules"]`, then args). */
export function containerInvocations(node: unknown, out: string[][] = []): string[][] {
  if (Array.isArray(node)) for (const v of node) containerInvocations(v, out);
  else if (isRecord(node)) {
    const { command, args } = node;
    if (Array.isArray(command) && command.length === 1 && command[0] === "flowrules") {
      out.push(Array.isArray(args) ? args.filter((a): a is string => typeof a === "string") : []);
    }
    for (const v of Object.values(node)) containerInvocations(v, out);
  }
  return out;
}

/** Shell words of one `npx flowrules …` invocation: continuations joined, stops at a pipe, redirect or separator. */
export function flowrulesInvocations(text: string): string[][] {
  const joined = text.replace(/\\\r?\n/g, " ");
  const out: string[][] = [];
  for (const line of joined.split(/\r?\n/)) {
    for (const m of line.matchAll(/\bnpx\s+flowrules\b(.*)/g)) {
      const words: string[] = [];
      for (const raw of (m[1] ?? "").trim().split(/\s+/)) {
        if (raw === "") continue;
        if (/^(\||\|\||&&|;|>|>>|2>|2>>|<)$/.test(raw) || /^[0-9]?>/.test(raw) || raw.startsWith("#")) break;
        words.push(raw.replace(/^["']|["']$/g, ""));
      }
      out.push(words);
    }
  }
  return out;
}
