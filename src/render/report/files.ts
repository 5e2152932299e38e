/**
 * `plan --report-dir DIR`: each report as `<rule>.csv` and `<rule>.json`, for schedules that archive them. File names
 * are made safe whatever the rule is called (only letters, digits, `.`, `_`, `-`; no leading dot; bounded length),
 * and unique even on case-insensitive file systems (a second report of one rule gets `-2`).
 */
import { mkdir } from "node:fs/promises";
import { UserError } from "../../model/errors.js";
import { writeFailure, writeFileAtomic } from "../../fs/write-file.js";
import { join } from "node:path";
import type { Plan } from "../../plan/types.js";
import { reportCsv } from "./csv.js";
import { reportJson } from "./json.js";

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
    await writeFileAtomic(csv, reportCsv(r));
    await writeFileAtomic(json, reportJson(r, plan));
    written.push(csv, json);
  }
  return written;
}
