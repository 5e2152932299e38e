/**
 * `flowrules test <paths...>`: which test files to run and which rules to load. A folder contributes every
 * `*.test.yaml` / `*.test.yml` below it (and its rules); a rule file brings its sibling `<name>.test.yaml`; a test
 * file named on its own brings its companion rule file `<name>.yaml` (or, without one, the rules of its folder).
 */
import { access, readdir, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

export const TEST_FILE_RE = /\.test\.ya?ml$/i;

export interface Discovery {
  testFiles: string[];
  /** paths for loadRules (it skips test files inside folders itself) */
  rulePaths: string[];
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

async function walk(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile() && TEST_FILE_RE.test(e.name)) out.push(p);
  }
}

async function firstExisting(candidates: string[]): Promise<string | undefined> {
  for (const c of candidates) if (await exists(c)) return c;
  return undefined;
}

export async function discover(paths: string[]): Promise<Discovery> {
  const testFiles: string[] = [];
  const rulePaths: string[] = [];
  const problems: Discovery["problems"] = [];
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
    let isDir: boolean;
    try {
      isDir = (await stat(p)).isDirectory();
    } catch {
      problems.push({ path: p, message: `no such file or folder: ${p}` });
      continue;
    }
    if (isDir) {
      const found: string[] = [];
      await walk(p, found);
      found.forEach(addTest);
      addRules(p);
    } else if (TEST_FILE_RE.test(p)) {
      addTest(p);
      const stem = join(dirname(p), basename(p).replace(TEST_FILE_RE, ""));
      addRules((await firstExisting([`${stem}.yaml`, `${stem}.yml`])) ?? dirname(p));
    } else {
      addRules(p);
      const stem = p.replace(/\.ya?ml$/i, "");
      const sibling = await firstExisting([`${stem}.test.yaml`, `${stem}.test.yml`]);
      if (sibling) addTest(sibling);
    }
  }
  return { testFiles, rulePaths, problems };
}
