/**
 * Where `flowrules.config.yaml` is found without `--config` (docs/operating.md, Profiles): in
 * the working directory or the nearest parent up to the repository root (the folder holding a `.git` of the current
 * user: see ownRepository), so
 * `cd rules && flowrules plan .` uses the repository's profiles. Outside a repository only the working directory
 * counts: a file in some parent of a temporary or home folder is nobody's config for this run. Plain `node:fs`, so a
 * completion Tab may load it (docs/performance.md, "Start-up").
 */
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { CONFIG_FILE } from "../model/defaults.js";

/** Whether `st` belongs to the user running flowrules (always, where the platform has no user ids). */
function ours(st: { uid: number }): boolean {
  const uid = process.getuid?.();
  return uid === undefined || st.uid === uid;
}

/**
 * Whether `<dir>/.git` makes `dir` a repository of the current user, as git's `safe.directory` judges it: a folder
 * owned by the user, or a file owned by the user that names (`gitdir: …`) a folder owned by the user holding `HEAD`
 * (a worktree's or a submodule's). An empty file, someone else's folder or a link is no repository: anyone may create
 * one at the top of a shared folder.
 */
function ownRepository(dir: string): boolean {
  const git = join(dir, ".git");
  try {
    const st = lstatSync(git);
    if (st.isDirectory()) return ours(st);
    if (!st.isFile() || !ours(st) || st.size > 4096) return false;
    const m = /^gitdir: (.+?)\r?\n?$/.exec(readFileSync(git, "utf8"));
    if (!m?.[1]) return false;
    const target = isAbsolute(m[1]) ? m[1] : resolve(dir, m[1]);
    const real = statSync(target);
    return real.isDirectory() && ours(real) && statSync(join(target, "HEAD")).isFile();
  } catch {
    return false;
  }
}

/**
 * The folders looked in, nearest first: cwd and its parents up to the one that is a repository of the current user
 * (ownRepository); the walk stops at the user's home folder and where the file system changes (a mount), and outside
 * such a repository only cwd counts.
 */
export function configSearchDirs(cwd: string): string[] {
  const start = resolve(cwd);
  const home = resolve(homedir());
  const dirs: string[] = [];
  let device: number | undefined;
  for (let dir = start; ;) {
    let dev: number;
    try {
      dev = statSync(dir).dev;
    } catch {
      return [start];
    }
    if (device !== undefined && dev !== device) return [start];
    device = dev;
    dirs.push(dir);
    if (ownRepository(dir)) return dirs;
    const up = dirname(dir);
    if (up === dir || dir === home) return [start];
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
