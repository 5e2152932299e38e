/**
 * `flowrules history --state DIR [--last N] [--format text|json]`: the changes of a watcher's last cycles, from their
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
  format: HistoryFormat;
  /** --rule, --instance */
  filter?: HistoryFilter;
  cwd?: string;
}

export async function historyCommand(opts: HistoryCommandOptions, io: CommandIO): Promise<number> {
  const dir = resolve(opts.cwd ?? process.cwd(), opts.stateDir);
  if (!existsSync(dir)) throw new UserError(`no state dir ${opts.stateDir}: give the --state of a watcher (flowrules watch --state DIR)`);
  const doc = await readHistory(dir, opts.stateDir, opts.last, (line) => {
    if (io.log?.structured) io.log.event("history.cycle_unreadable", { message: line }, "warn");
    else io.stderr(`flowrules: warning: ${textSafe(line)}\n`);
  }, opts.filter);
  io.stdout(HISTORY_FORMATS[opts.format](doc));
  return EXIT_OK;
}
