/** Expands the paths given on the command line into the ordered list of rule files to read. */
import { readdir, realpath, stat } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { CONFIG_FILE } from "../model/defaults.js";

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

export type FileProblems = FileListing["problems"];

/** Whether `real` (a real path) lies in the folder `root` (a real path) or is it. */
function inside(real: string, root: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

interface Walk {
  /** the folder given, as given (for messages) and as its real path (what links must stay inside) */
  given: string;
  root: string;
  keep: (name: string) => boolean;
  out: string[];
  problems: FileProblems;
  /** real paths of the folders walked: a link back to one is not walked again (no loops, no file read twice) */
  walked: Set<string>;
}

/**
 * Files below `dir` whose name passes `keep`, sorted by name, skipping hidden entries and node_modules — which also
 * skips a Kubernetes ConfigMap volume's `..data` link and `..2026_…` folder, whose files the visible links lead to.
 *
 * Symbolic links are followed when what they lead to (its real path) lies inside the folder given: a ConfigMap's
 * `x.yaml → ..data/x.yaml → ..2026_…/x.yaml` is read as `x.yaml`. A link leading outside it is never read and is one
 * problem naming it: a pull request must not point a rule file at a secret and have CI quote it.
 */
export async function walkFiles(dir: string, keep: (name: string) => boolean, out: string[] = [], problems: FileProblems = []): Promise<string[]> {
  const root = await realpath(dir);
  await walk(dir, { given: dir, root, keep, out, problems, walked: new Set([root]) });
  return out;
}

async function walk(dir: string, w: Walk): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  // sorted by name so the file order (and the digest) does not depend on the filesystem
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const real = await realpath(p);
      if (w.walked.has(real)) continue;
      w.walked.add(real);
      await walk(p, w);
    } else if (e.isFile()) {
      if (w.keep(e.name)) w.out.push(p);
    } else if (e.isSymbolicLink()) {
      await followLink(p, e.name, w);
    }
  }
}

async function followLink(p: string, name: string, w: Walk): Promise<void> {
  let real: string;
  try {
    real = await realpath(p);
  } catch {
    // a link to nothing: a rule file that cannot be read is said, anything else is let be
    if (w.keep(name)) w.problems.push({ path: p, message: `${p} is a symbolic link that leads to nothing: not read` });
    return;
  }
  if (!inside(real, w.root)) {
    // refused before anything there is read; a link of another name (a LICENSE beside the rules) is let be, unless
    // it leads to a folder, which could hold rule files
    const folder = !w.keep(name) && (await stat(real).then((s) => s.isDirectory(), () => false));
    if (w.keep(name) || folder) {
      w.problems.push({ path: p, message: `${p} is a symbolic link that leads outside ${w.given} (to ${real}): not read; a rule file's link must stay inside the folder given` });
    }
    return;
  }
  const s = await stat(real);
  if (s.isDirectory()) {
    if (w.walked.has(real)) return;
    w.walked.add(real);
    await walk(p, w);
  } else if (s.isFile() && w.keep(name)) {
    w.out.push(p);
  }
}

/** Whether a path given on the command line is a folder; undefined (and a problem said) when it does not exist. */
export async function isFolder(p: string, problems: FileListing["problems"]): Promise<boolean | undefined> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    problems.push({ path: p, message: `no such file or folder: ${p}${await hereHint(p)}` });
    return undefined;
  }
}

/**
 * `cd rules && flowrules plan` looks for `rules/rules/` (the default `rules/` is relative to the working
 * directory): when the folder missing is the default and rule files lie right here, say how to use them.
 */
async function hereHint(p: string): Promise<string> {
  if (p.replace(/\/+$/, "") !== "rules") return "";
  const names = await readdir(".").catch(() => [] as string[]);
  return names.some((n) => isRuleFileName(n) && n !== CONFIG_FILE) ? " (this folder holds rule files: give `.` to use them)" : "";
}

/** Files are taken as given (whatever their name); folders contribute every *.yaml / *.yml below them, sorted. */
export async function listRuleFiles(paths: string[]): Promise<FileListing> {
  const files: string[] = [];
  const fromFolders = new Set<string>();
  const problems: FileListing["problems"] = [];
  // by real path: a file reached twice (named and in its folder, or through a link) is read once
  const seen = new Set<string>();
  for (const p of paths) {
    const isDir = await isFolder(p, problems);
    if (isDir === undefined) continue;
    const found: string[] = [];
    if (isDir) {
      const before = problems.length;
      try {
        await walkFiles(p, isRuleFileName, found, problems);
      } catch (err) {
        problems.push({ path: p, message: `cannot read folder ${p}: ${(err as Error).message}` });
        continue;
      }
      if (found.length === 0 && problems.length === before) problems.push({ path: p, message: `no rule files (*.yaml, *.yml) in ${p}` });
    } else {
      found.push(p);
    }
    for (const f of found) {
      const key = await realpath(f).catch(() => resolve(f));
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
