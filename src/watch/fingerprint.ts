/**
 * Whether the rule files or the config file changed on disk, told by a cheap fingerprint taken before every poll:
 * per entry below the paths given its name, type, inode, for a file its size and modification time, and for a
 * symbolic link where it leads (its target and real path). No file is read.
 *
 * Polled rather than watched (fs.watch): a Kubernetes ConfigMap volume is updated by swapping a symbolic link
 * (`..data → ..2026_…`), which file watchers miss; every rule file's real path changes with that swap, and so does the
 * fingerprint. A few entries cost a few microseconds each per poll.
 */
import { lstat, readdir, readlink, realpath, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Folders that hold no rules (the rule loader skips them too: src/rules/files.ts). */
const SKIPPED = new Set(["node_modules", ".git"]);
/** A folder tree this deep is not a rule folder (and a link loop is cut here too). */
const MAX_DEPTH = 16;

async function describe(path: string, out: string[], depth: number, seen: Set<string>): Promise<void> {
  let l;
  try {
    l = await lstat(path);
  } catch {
    out.push(`${path}\tabsent`);
    return;
  }
  let s = l;
  if (l.isSymbolicLink()) {
    const target = await readlink(path).catch(() => "?");
    const real = await realpath(path).catch(() => "dangling");
    out.push(`${path}\tlink\t${target}\t${real}`);
    try {
      s = await stat(path);
    } catch {
      return;
    }
  }
  if (s.isDirectory()) {
    // not its modification time: its entries are listed below, and the removal of a ConfigMap's old timestamped
    // folder (which changes it) changes nothing read
    out.push(`${path}\tdir\t${s.ino}`);
    // a real path seen before (a link back up, two links to one folder) is not walked twice
    const real = await realpath(path).catch(() => path);
    if (depth >= MAX_DEPTH || seen.has(real)) return;
    seen.add(real);
    let names: string[];
    try {
      names = (await readdir(path)).sort();
    } catch {
      out.push(`${path}\tunreadable`);
      return;
    }
    for (const name of names) {
      if (SKIPPED.has(name)) continue;
      const child = join(path, name);
      // `..data`, `..2026_…`: a ConfigMap's own entries are not walked (the files linking into them are, through
      // their real paths). Its links are described: the swap of `..data` changes what is read. Its timestamped
      // folders are not: the kubelet removes the old one after the swap, and that removal changes nothing read —
      // describing it would reload a broken edit twice and say its problems twice
      if (name.startsWith("..")) {
        const cl = await lstat(child).catch(() => undefined);
        if (cl?.isSymbolicLink()) out.push(`${child}\tlink\t${await readlink(child).catch(() => "?")}`);
        continue;
      }
      await describe(child, out, depth + 1, seen);
    }
    return;
  }
  out.push(`${path}\tfile\t${s.size}\t${s.mtimeMs}\t${s.ino}`);
}

/**
 * The fingerprint of the rule paths and the config file: equal strings mean nothing a reload would read has changed
 * (short of an edit that keeps size, modification time and inode, which editors and Kubernetes do not make).
 */
export async function fingerprint(paths: readonly string[], cwd: string = process.cwd()): Promise<string> {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) await describe(resolve(cwd, p), out, 0, seen);
  return out.join("\n");
}
