/**
 * `plan --report-dir DIR`: each report as `<rule>.csv` and `<rule>.json`, for schedules that archive them. File names
 * are made safe whatever the rule is called (only letters, digits, `.`, `_`, `-`; no leading dot; bounded length),
 * and unique even on case-insensitive file systems (a second report of one rule gets `-2`).
 */
import { mkdir, stat } from "node:fs/promises";
import { UserError } from "../../model/errors.js";
import { writeFailure, writeFileAtomic } from "../../fs/write-file.js";
import { join, resolve } from "node:path";
import type { Plan } from "../../plan/types.js";
import { reportCsvPieces } from "./csv.js";
import { reportJsonPieces } from "./json.js";

const MAX_STEM = 100;

export function safeStem(name: string): string {
  const s = name
    .normalize("NFKD")
    // accents come apart into base letter + combining mark under NFKD: keep the letter, drop the mark
    .replace(/\p{M}+/gu, "")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._-]+/, "")
    .slice(0, MAX_STEM)
    .replace(/[._]+$/, "");
  return s === "" ? "report" : s;
}

/** One stem per report, in plan order; unique ignoring case. */
export function reportStems(plan: Pick<Plan, "reports">): string[] {
  const used = new Set<string>();
  return plan.reports.map((r) => {
    const base = safeStem(r.rule);
    let stem = base;
    for (let n = 2; used.has(stem.toLowerCase()); n++) stem = `${base}-${n}`;
    used.add(stem.toLowerCase());
    return stem;
  });
}

/** The files a plan's reports go to in `dir`, with the rule each comes from. */
export function reportFiles(dir: string, plan: Pick<Plan, "reports">): Array<{ path: string; rule: string }> {
  const stems = reportStems(plan);
  return plan.reports.flatMap((r, i) => {
    const stem = stems[i] ?? safeStem(r.rule);
    return [".csv", ".json"].map((ext) => ({ path: join(dir, `${stem}${ext}`), rule: r.rule }));
  });
}

/** A path as a key that two spellings of one file share: absolute, and without case (a case-insensitive file system). */
async function fileKeys(path: string): Promise<string[]> {
  const keys = [`path:${resolve(path).toLowerCase()}`];
  // one file under two names (a link, a hard link) is one file too
  const st = await stat(path).catch(() => undefined);
  if (st !== undefined) keys.push(`inode:${st.dev}:${st.ino}`);
  return keys;
}

/**
 * Why the report files cannot be written beside the run's other files, or undefined: a report whose file is one
 * `others` names (`--out`'s plan, the workflow catalog) would replace it — a rule named `plan` wrote its JSON over
 * `plan.json`. Checked before anything of the run is written.
 */
export async function reportFileClash(
  dir: string,
  plan: Pick<Plan, "reports">,
  others: Array<{ path: string; what: string }>,
): Promise<string | undefined> {
  const taken = new Map<string, string>();
  for (const o of others) for (const key of await fileKeys(o.path)) taken.set(key, o.what);
  for (const f of reportFiles(dir, plan)) {
    for (const key of await fileKeys(f.path)) {
      const what = taken.get(key);
      if (what !== undefined) {
        return `the report of rule ${JSON.stringify(f.rule)} would be written to ${f.path}, which is ${what}: rename the rule or choose another --report-dir (nothing was written)`;
      }
    }
    for (const key of await fileKeys(f.path)) taken.set(key, `the report file of rule ${JSON.stringify(f.rule)}`);
  }
  return undefined;
}

/** Writes the files and returns their paths. */
export async function writeReportFiles(dir: string, plan: Plan): Promise<string[]> {
  await mkdir(dir, { recursive: true }).catch((err: unknown) => {
    throw new UserError(`cannot write into ${dir}: ${writeFailure(err)}`);
  });
  const written: string[] = [];
  const stems = reportStems(plan);
  for (const [i, r] of plan.reports.entries()) {
    const stem = stems[i] ?? safeStem(r.rule);
    const csv = join(dir, `${stem}.csv`);
    const json = join(dir, `${stem}.json`);
    await writeFileAtomic(csv, reportCsvPieces(r));
    await writeFileAtomic(json, reportJsonPieces(r, plan));
    written.push(csv, json);
  }
  return written;
}
