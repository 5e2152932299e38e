/** `flowrules history`: commander wiring only; the reading lives in src/watch/history.ts (docs/watch.md, "History"). */
import { Option, type Command } from "commander";
import { z } from "zod";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";
import { UserError } from "../model/errors.js";
import { HISTORY_FORMAT_NAMES, type HistoryFormat } from "../render/history/index.js";

const DEFAULT_LAST = 10;

const Flags = z.object({
  state: z.string().optional(),
  last: z.string().optional(),
  format: z.enum(HISTORY_FORMAT_NAMES as [HistoryFormat, ...HistoryFormat[]]),
});

export function registerHistory(program: Command): void {
  program
    .command("history")
    .description("list the changes of a watcher's last cycles (time, rule, instance, kind, outcome) from their journals, without any request")
    .option("--state <dir>", "the watcher's state dir (env FLOWRULES_STATE)")
    .option("--last <n>", `the last N cycles that applied something (default ${DEFAULT_LAST})`)
    .addOption(new Option("--format <format>", "output format: text, or json (schemas/history.schema.json)").choices(HISTORY_FORMAT_NAMES).default("text"))
    .action(async (raw: Record<string, unknown>, command: Command) => {
      const parsed = Flags.safeParse(raw);
      if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
      const f = parsed.data;
      const stateDir = f.state ?? (process.env.FLOWRULES_STATE || undefined);
      if (!stateDir) throw new UserError("history needs the watcher's state dir: pass --state DIR or set FLOWRULES_STATE");
      const last = f.last === undefined ? DEFAULT_LAST : Number(f.last);
      if (!/^\d+$/.test(f.last ?? "1") || last < 1) throw new UserError(`--last must be a whole number of cycles, at least 1; got "${f.last ?? ""}"`);
      const io = withLogger(processIO(), commandLogger(command));
      process.exitCode = await runLogged(io, "history", { state: stateDir, last }, async (io) =>
        (await import("../commands/history.js")).historyCommand({ stateDir, last, format: f.format }, io),
      );
    });
}
