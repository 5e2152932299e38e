/**
 * The cycle folders of a watcher with `--apply`: `<state>/watch/cycles/<time>-<pid>-<n>/plan.json` and its journal
 * beside it. Whether a cycle finished is the journal's to say (src/apply/journal.ts); the newest KEEP_CYCLES
 * finished ones are kept, for a resume and for `flowrules history`. An unfinished cycle whose plan cannot be read
 * (truncated by a crash, edited) is set aside as `<folder>.corrupt`, kept for a look and never walked again; the
 * newest KEEP_CYCLES of those are kept too, so a watcher that keeps meeting broken plans does not fill the disk.
 */
import { existsSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { journalEvents, lastRunFinished } from "../apply/journal.js";
import { PLAN_OUT_HINT } from "../plan/read.js";
import { KEEP_CYCLES } from "./settings.js";

export interface WatchPaths {
  root: string;
  lock: string;
  bookmarks: string;
  cycles: string;
  /** one line per cycle that planned (./cycle-log.ts) */
  log: string;
}

export function watchPaths(stateDir: string): WatchPaths {
  const root = join(stateDir, "watch");
  return {
    root,
    lock: join(root, "lock"),
    bookmarks: join(root, "bookmarks.json"),
    cycles: join(root, "cycles"),
    log: join(root, "cycles.jsonl"),
  };
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

/** The suffix of a cycle folder set aside: not a cycle any more (not resumed nor listed; pruned apart). */
export const SET_ASIDE = ".corrupt";
/** `<folder>.corrupt`, or `<folder>.corrupt.2`, … (./setAside) */
const SET_ASIDE_NAME = /\.corrupt(?:\.\d+)?$/;

/** The cycle folders holding a plan, oldest first (those set aside are not cycles). */
export async function cycleFolders(cyclesDir: string): Promise<CycleFolder[]> {
  let names: string[];
  try {
    names = (await readdir(cyclesDir)).sort();
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    if (SET_ASIDE_NAME.test(name)) return [];
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

/**
 * Removes the oldest finished cycles beyond the newest `keep`; unfinished ones stay until resumed. Folders set aside
 * are pruned apart from the cycles, likewise: the newest `keep` stay (names sort in time order).
 */
export async function pruneCycles(cyclesDir: string, keep = KEEP_CYCLES): Promise<void> {
  const all = await cycleFolders(cyclesDir);
  for (const c of all.slice(0, Math.max(0, all.length - keep))) {
    if (finished(c)) await rm(join(cyclesDir, c.name), { recursive: true, force: true });
  }
  let names: string[];
  try {
    names = (await readdir(cyclesDir)).filter((n) => SET_ASIDE_NAME.test(n)).sort();
  } catch {
    return;
  }
  for (const name of names.slice(0, Math.max(0, names.length - keep)))
    await rm(join(cyclesDir, name), { recursive: true, force: true });
}

/** Why a cycle's plan cannot be read, in one line naming the file (without advice meant for hand-made plans). */
export function planProblem(message: string): string {
  return message.replace(PLAN_OUT_HINT, "");
}

/**
 * Sets aside the cycle folder of `planFile` (its plan cannot be resumed): renamed to `<folder>.corrupt` (or
 * `<folder>.corrupt.2`, … when that exists), plan and journal inside. Returns the new folder.
 */
export async function setAside(planFile: string): Promise<string> {
  const folder = dirname(planFile);
  for (let n = 1; ; n++) {
    const to = `${folder}${SET_ASIDE}${n === 1 ? "" : `.${n}`}`;
    if (existsSync(to)) continue;
    await rename(folder, to);
    return to;
  }
}
