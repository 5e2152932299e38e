/**
 * The watcher's log of its cycles, `<state>/watch/cycles.jsonl`: one line per cycle that planned — why it ran, its
 * result, the rules it held back, its errors, its counts, its folder when it applied something — so that
 * `flowrules history` shows the cycles that failed or held rules too, not only those with a journal. Appended as
 * each cycle ends; cut to its newest half past a size, so a watcher that runs for months does not fill the disk.
 */
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { z } from "zod";

/** Past this size the log keeps its newest half. */
const MAX_LOG_BYTES = 1 << 20;
/** A cycle's errors kept in its line (the cycle's stderr lines and events have them all). */
const MAX_ERRORS = 20;

export const CycleLogLine = z.object({
  at: z.string(),
  cycle: z.number().int(),
  kind: z.string(),
  result: z.enum(["ok", "partial", "failed"]),
  planned: z.number().int(),
  applied: z.number().int(),
  held: z.array(z.string()),
  errors: z.array(z.string()),
  folder: z.string().nullable(),
});
export type CycleLogLine = z.infer<typeof CycleLogLine>;

export async function appendCycleLog(file: string, line: CycleLogLine): Promise<void> {
  const errors =
    line.errors.length > MAX_ERRORS
      ? [...line.errors.slice(0, MAX_ERRORS), `… and ${line.errors.length - MAX_ERRORS} more errors`]
      : line.errors;
  await appendFile(file, `${JSON.stringify({ ...line, errors })}\n`);
  const size = (await stat(file)).size;
  if (size > MAX_LOG_BYTES) {
    const lines = (await readFile(file, "utf8")).split("\n").filter(Boolean);
    await writeFile(file, `${lines.slice(Math.floor(lines.length / 2)).join("\n")}\n`);
  }
}

/** The log's lines, oldest first; a line that does not parse (a crash mid-write) is skipped. */
export async function readCycleLog(file: string): Promise<CycleLogLine[]> {
  const text = await readFile(file, "utf8").catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw err;
  });
  const out: CycleLogLine[] = [];
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    try {
      const parsed = CycleLogLine.safeParse(JSON.parse(raw));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // a torn last line
    }
  }
  return out;
}
