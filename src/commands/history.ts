/**
 * `flowrules history --state DIR [--last N] [--since TIME] [--format text|json]`: the changes of a watcher's last cycles, from their
 * journals (docs/watch.md, "History"). Reads files only; works while the watcher runs.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { CommandIO } from "../log/command-io.js";
import { EXIT_OK, UserError } from "../model/errors.js";
import { textSafe } from "../render/escape.js";
import { HISTORY_FORMATS, type HistoryFormat } from "../render/history/index.js";
import { readHistory, type HistoryFilter } from "../watch/history.js";

export interface HistoryCommandOptions {
  stateDir: string;
  last: number;
  /** of the last cycles, only those started at or after this instant */
  since?: Date | undefined;
  format: HistoryFormat;
  /** --rule, --instance */
  filter?: HistoryFilter;
  cwd?: string;
}

export async function historyCommand(opts: HistoryCommandOptions, io: CommandIO): Promise<number> {
  const dir = resolve(opts.cwd ?? process.cwd(), opts.stateDir);
  if (!existsSync(dir))
    throw new UserError(`no state dir ${opts.stateDir}: give the --state of a watcher (flowrules watch --state DIR)`);
  const doc = await readHistory(
    dir,
    opts.stateDir,
    opts.last,
    (line) => {
      if (io.log?.structured) io.log.event("history.cycle_unreadable", { message: line }, "warn");
      else io.stderr(`flowrules: warning: ${textSafe(line)}\n`);
    },
    opts.filter,
  );
  const since = opts.since?.getTime();
  // a cycle that never started (killed before its apply) has no time to compare: it is left out once a time is asked for
  const cycles =
    since === undefined
      ? doc.cycles
      : doc.cycles.filter((c) => c.started_at !== null && Date.parse(c.started_at) >= since);
  io.stdout(HISTORY_FORMATS[opts.format]({ ...doc, cycles }));
  return EXIT_OK;
}
