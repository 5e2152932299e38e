/**
 * `flowrules test <paths...>`: which test files to run and which rules to load. A folder contributes every
 * `*.test.yaml` / `*.test.yml` below it (and its rule files); a rule file brings its sibling `<name>.test.yaml`; a
 * test file named on its own brings its companion rule file `<name>.yaml` (or, without one, the rules of its folder).
 *
 * Inside folders, YAML that is plainly not a rule file — no top-level `version:` or `rules:` key, e.g. the CI
 * workflows and Kubernetes manifests kept next to the rules in examples/ci/ — is left out instead of failing the run.
 * A file named on the command line is always loaded as given.
 */
import { access, readFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { isFolder, listRuleFiles, looksLikeRuleFile, walkFiles } from "../rules/files.js";

export const TEST_FILE_RE = /\.test\.ya?ml$/i;

export interface Discovery {
  testFiles: string[];
  /** rule files (and folders without any) for loadRules */
  rulePaths: string[];
  /** YAML files inside the folders that are not rule files (no top-level version / rules) */
  skipped: string[];
  problems: Array<{ path: string; message: string }>;
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}

async function ruleFilesIn(
  dir: string,
  problems: Discovery["problems"],
): Promise<{ files: string[]; skipped: string[] }> {
  const listing = await listRuleFiles([dir]);
  // a link leading out of the folder (src/rules/files.ts) is said here too, or `test` would drop it silently
  for (const p of listing.problems) if (!problems.some((q) => q.path === p.path)) problems.push(p);
  const files: string[] = [];
  const skipped: string[] = [];
  for (const f of listing.files) {
    const text = await readFile(f, "utf8").catch(() => "version:");
    (looksLikeRuleFile(text) ? files : skipped).push(f);
  }
  return { files, skipped };
}

async function firstExisting(candidates: string[]): Promise<string | undefined> {
  for (const c of candidates) if (await exists(c)) return c;
  return undefined;
}

export async function discover(paths: string[]): Promise<Discovery> {
  const testFiles: string[] = [];
  const rulePaths: string[] = [];
  const problems: Discovery["problems"] = [];
  const skipped: string[] = [];
  const seenTests = new Set<string>();
  const seenRules = new Set<string>();
  const addTest = (p: string): void => {
    if (seenTests.has(resolve(p))) return;
    seenTests.add(resolve(p));
    testFiles.push(p);
  };
  const addRules = (p: string): void => {
    if (seenRules.has(resolve(p))) return;
    seenRules.add(resolve(p));
    rulePaths.push(p);
  };

  for (const p of paths) {
    const isDir = await isFolder(p, problems);
    if (isDir === undefined) continue;
    if (isDir) {
      const found: string[] = [];
      await walkFiles(p, (name) => TEST_FILE_RE.test(name), found, problems);
      found.forEach(addTest);
      const rules = await ruleFilesIn(p, problems);
      skipped.push(...rules.skipped);
      // a folder with no rule file at all is still handed over, so loadRules says so
      if (rules.files.length > 0) rules.files.forEach(addRules);
      else addRules(p);
    } else if (TEST_FILE_RE.test(p)) {
      addTest(p);
      const stem = join(dirname(p), basename(p).replace(TEST_FILE_RE, ""));
      const companion = await firstExisting([`${stem}.yaml`, `${stem}.yml`]);
      if (companion) addRules(companion);
      else (await ruleFilesIn(dirname(p), problems)).files.forEach(addRules);
    } else {
      addRules(p);
      const stem = p.replace(/\.ya?ml$/i, "");
      const sibling = await firstExisting([`${stem}.test.yaml`, `${stem}.test.yml`]);
      if (sibling) addTest(sibling);
    }
  }
  return { testFiles, rulePaths, skipped, problems };
}
