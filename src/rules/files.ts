/** Expands the paths given on the command line into the ordered list of rule files to read. */
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

export interface FileListing {
  files: string[];
  /** the files found by walking a folder (not named on the command line) */
  fromFolders: Set<string>;
  /** paths that could not be used, with the reason (missing, empty folder, unreadable) */
  problems: Array<{ path: string; message: string }>;
}

const RULE_FILE = /\.ya?ml$/i;
/** rule tests live next to rules but belong to `flowrules test` */
const TEST_FILE = /\.test\.ya?ml$/i;

export function isRuleFileName(name: string): boolean {
  return RULE_FILE.test(name) && !TEST_FILE.test(name);
}

/** Files below `dir` whose name passes `keep`, sorted by name, skipping hidden folders and node_modules. */
export async function walkFiles(dir: string, keep: (name: string) => boolean, out: string[] = []): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  // sorted by name so the file order (and the digest) does not depend on the filesystem
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) await walkFiles(p, keep, out);
    else if (e.isFile() && keep(e.name)) out.push(p);
  }
  return out;
}

/** Whether a path given on the command line is a folder; undefined (and a problem said) when it does not exist. */
export async function isFolder(p: string, problems: FileListing["problems"]): Promise<boolean | undefined> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    problems.push({ path: p, message: `no such file or folder: ${p}` });
    return undefined;
  }
}

/** Files are taken as given (whatever their name); folders contribute every *.yaml / *.yml below them, sorted. */
export async function listRuleFiles(paths: string[]): Promise<FileListing> {
  const files: string[] = [];
  const fromFolders = new Set<string>();
  const problems: FileListing["problems"] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    const isDir = await isFolder(p, problems);
    if (isDir === undefined) continue;
    const found: string[] = [];
    if (isDir) {
      try {
        await walkFiles(p, isRuleFileName, found);
      } catch (err) {
        problems.push({ path: p, message: `cannot read folder ${p}: ${(err as Error).message}` });
        continue;
      }
      if (found.length === 0) problems.push({ path: p, message: `no rule files (*.yaml, *.yml) in ${p}` });
    } else {
      found.push(p);
    }
    for (const f of found) {
      const key = resolve(f);
      if (seen.has(key)) continue;
      seen.add(key);
      files.push(f);
      if (isDir) fromFolders.add(f);
    }
  }
  return { files, fromFolders, problems };
}

/**
 * A rule file has `version:` or `rules:` at the top level; a CI workflow or a Kubernetes manifest kept beside the
 * rules (examples/ci/) has neither. Inside folders such YAML is left out instead of failing the whole set; a file
 * named on the command line is always read as rules, and a rule file with a typo in one key still has the other.
 */
export function looksLikeRuleFile(text: string): boolean {
  return /^(?:version|rules)[ \t]*:/m.test(text);
}
