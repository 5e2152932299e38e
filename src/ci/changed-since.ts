/**
 * `plan --changed-since <ref>`: which rules were added, edited or removed between a git ref and the working tree,
 * for the rule paths given. The working tree (not HEAD) is the "now" side, so it works the same on a CI checkout of
 * the pull request and on a developer's uncommitted edits.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { isRuleFileName, listRuleFiles } from "../rules/index.js";
import { UserError } from "../model/errors.js";
import { filesAt, repoRoot, resolveCommit, showFile } from "./git.js";
import {
  definitionProblem,
  diffDefinitions,
  ruleDefinitions,
  type DefinitionDiff,
  type RuleDefinition,
} from "./rule-definitions.js";
import { looksLikeRuleFile } from "../rules/files.js";

export interface ChangedSince extends DefinitionDiff {
  ref: string;
  /** the commit the ref named when compared */
  commit: string;
  /** one line per rule file at the ref that could not be read (invalid YAML): its rules count as added */
  warnings: string[];
}

/**
 * One warning per rule file that was not valid YAML at the ref: its rules cannot be compared, so each of them counts
 * as added (which errs towards planning more), and the reader is told why.
 */
export function unreadableAtRef(ref: string, files: RuleText[], flag: string): string[] {
  return files.flatMap((f) => {
    if (f.fromFolder && !looksLikeRuleFile(f.text)) return [];
    const problem = definitionProblem(f.text);
    return problem
      ? [
          `${flag}: ${f.file} at ${ref} is not valid YAML (${problem}); its rules there cannot be compared, so they count as added`,
        ]
      : [];
  });
}

/** The same files `loadRules` reads from a folder: *.yaml / *.yml but no *.test.yaml, nothing under dot folders or node_modules. */
function isRuleFileBelow(pathBelow: string): boolean {
  const parts = pathBelow.split("/");
  const name = parts[parts.length - 1] ?? "";
  if (parts.some((p) => p.startsWith(".") || p === "node_modules")) return false;
  return isRuleFileName(name);
}

const toPosix = (p: string): string => p.split(sep).join("/");

interface Located {
  root: string;
  /** the path relative to the repository root, posix separators, "" for the root itself */
  inRepo: string;
  isDir: boolean;
}

async function locate(path: string, flag: string): Promise<Located> {
  let real: string;
  let isDir: boolean;
  try {
    real = await realpath(path);
    isDir = (await stat(real)).isDirectory();
  } catch {
    throw new UserError(`no such file or folder: ${path}`);
  }
  const root = await realpath(await repoRoot(isDir ? real : dirname(real), flag));
  return { root, inRepo: toPosix(relative(root, real)), isDir };
}

/** A rule file's text, named as the caller names files (relative to `cwd`). */
export interface RuleText {
  file: string;
  text: string;
  /** read from a folder (not named itself): loadRules skips such a file when it does not look like a rule file */
  fromFolder: boolean;
}

export interface RuleTexts {
  ref: string;
  commit: string;
  /** the rule files under the paths at the ref (from git) */
  before: RuleText[];
  /** the same paths in the working tree (from disk) */
  now: RuleText[];
}

/** The rule files under `paths` at `ref` and as they are now; `flag` names the option in errors. */
export async function ruleTextsSince(
  ref: string,
  paths: string[],
  cwd = process.cwd(),
  flag = "--changed-since",
): Promise<RuleTexts> {
  const located = await Promise.all(paths.map((p) => locate(p, flag)));
  const roots = [...new Set(located.map((l) => l.root))];
  const root = roots[0];
  if (root === undefined) throw new UserError(`${flag} needs at least one rule path`);
  if (roots.length > 1)
    throw new UserError(`${flag}: the rule paths are in different git repositories (${roots.join(", ")})`);
  const commit = await resolveCommit(ref, root, flag);

  // the files under each path, at the ref and now (a folder is listed from git at the ref, from disk now)
  const before: RuleText[] = [];
  const now: RuleText[] = [];
  const seenBefore = new Set<string>();
  const nowFiles = new Map<string, boolean>();
  for (const l of located) {
    const atRef = await filesAt(commit, l.inRepo, root);
    for (const f of atRef) {
      // a folder contributes its rule files; a file given by name counts whatever its name (as loadRules does)
      const below = l.isDir ? (l.inRepo === "" ? f : f.slice(l.inRepo.length + 1)) : basename(f);
      if (l.isDir && !isRuleFileBelow(below)) continue;
      if (!l.isDir && f !== l.inRepo) continue;
      if (seenBefore.has(f)) continue;
      seenBefore.add(f);
      const shown = toPosix(relative(cwd, join(root, f))) || f;
      before.push({ file: shown, text: await showFile(commit, f, root), fromFolder: l.isDir });
    }
    for (const f of await filesNow(l, root)) nowFiles.set(f, (nowFiles.get(f) ?? true) && l.isDir);
  }
  for (const f of [...nowFiles.keys()].sort()) {
    const shown = toPosix(relative(cwd, join(root, f)));
    now.push({ file: shown, text: await readFile(join(root, f), "utf8"), fromFolder: nowFiles.get(f) === true });
  }
  return { ref, commit, before, now };
}

/** The rule definitions under `paths` at `ref`, and in the files as they are now. */
export async function rulesChangedSince(ref: string, paths: string[], cwd = process.cwd()): Promise<ChangedSince> {
  const t = await ruleTextsSince(ref, paths, cwd);
  const defs = (list: RuleText[]): RuleDefinition[] => list.flatMap((f) => ruleDefinitions(f.file, f.text));
  return {
    ref,
    commit: t.commit,
    ...diffDefinitions(defs(t.before), defs(t.now)),
    warnings: unreadableAtRef(ref, t.before, "--changed-since"),
  };
}

/** Rule files under a located path on disk, relative to the repository root. */
async function filesNow(l: Located, root: string): Promise<string[]> {
  const listing = await listRuleFiles([join(root, l.inRepo)]);
  return listing.files.map((f) => toPosix(relative(root, f)));
}
