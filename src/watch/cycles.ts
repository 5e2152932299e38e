/**
 * The cycle folders of a watcher with `--apply`: `<state>/watch/cycles/<time>-<pid>-<n>/plan.json` and its journal
 * beside it. Whether a cycle finished is the journal's to say (src/apply/journal.ts); the newest KEEP_CYCLES
 * finished ones are kept, for a resume and for `flowrules history`.
 */
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { journalEvents, lastRunFinished } from "../apply/journal.js";
import { KEEP_CYCLES } from "./settings.js";

export interface WatchPaths {
  root: string;
  lock: string;
  bookmarks: string;
  cycles: string;
}

export function watchPaths(stateDir: string): WatchPaths {
  const root = join(stateDir, "watch");
  return { root, lock: join(root, "lock"), bookmarks: join(root, "bookmarks.json"), cycles: join(root, "cycles") };
}

/** The folder of cycle `n`, named so that names sort in time order. */
export function cycleDir(cyclesDir: string, createdAt: string, n: number, pid = process.pid): string {
  return join(cyclesDir, `${createdAt.replace(/[:.]/g, "-")}-${pid}-${n}`);
}

export interface CycleFolder {
  name: string;
  planFile: string;
  journalFile: string;
}

/** The cycle folders holding a plan, oldest first. */
export async function cycleFolders(cyclesDir: string): Promise<CycleFolder[]> {
  let names: string[];
  try {
    names = (await readdir(cyclesDir)).sort();
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const planFile = join(cyclesDir, name, "plan.json");
    return existsSync(planFile) ? [{ name, planFile, journalFile: `${planFile}.journal.jsonl` }] : [];
  });
}

export function finished(c: CycleFolder): boolean {
  return lastRunFinished(journalEvents(c.journalFile));
}

/** Plans of cycles whose apply did not finish (the watcher was killed while applying): to be resumed. */
export async function unfinishedCycles(cyclesDir: string): Promise<string[]> {
  return (await cycleFolders(cyclesDir)).filter((c) => !finished(c)).map((c) => c.planFile);
}

/** Removes the oldest finished cycles beyond the newest `keep`; unfinished ones stay until resumed. */
export async function pruneCycles(cyclesDir: string, keep = KEEP_CYCLES): Promise<void> {
  const all = await cycleFolders(cyclesDir);
  for (const c of all.slice(0, Math.max(0, all.length - keep))) {
    if (finished(c)) await rm(join(cyclesDir, c.name), { recursive: true, force: true });
  }
}
