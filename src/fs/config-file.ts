/**
 * Where `flowrules.config.yaml` is found without `--config` (docs/operating.md, Profiles): in
 * the working directory or the nearest parent up to the repository root (the folder holding `.git`), so
 * `cd rules && flowrules plan .` uses the repository's profiles. Outside a repository only the working directory
 * counts: a file in some parent of a temporary or home folder is nobody's config for this run. Plain `node:fs`, so a
 * completion Tab may load it (docs/performance.md, "Start-up").
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CONFIG_FILE } from "../model/defaults.js";

/** The folders looked in, nearest first: cwd and its parents up to the one holding `.git`; outside a repository, cwd. */
export function configSearchDirs(cwd: string): string[] {
  const start = resolve(cwd);
  const dirs: string[] = [];
  for (let dir = start; ; ) {
    dirs.push(dir);
    if (existsSync(join(dir, ".git"))) return dirs;
    const up = dirname(dir);
    if (up === dir) return [start];
    dir = up;
  }
}

/** The absolute path of the nearest config file, or undefined when there is none. */
export function findConfigFile(cwd: string): string | undefined {
  for (const dir of configSearchDirs(cwd)) {
    const file = join(dir, CONFIG_FILE);
    if (existsSync(file)) return file;
  }
  return undefined;
}
