/** `flowrules history`: commander wiring only; the reading lives in src/watch/history.ts (docs/watch.md, "History"). */
import { Option, type Command } from "commander";
import { z } from "zod";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";
import { UserError } from "../model/errors.js";
import { HISTORY_FORMAT_NAMES, type HistoryFormat } from "../render/history/index.js";
import { addOptions, CONNECTION_FLAGS, pick, PLANNING_FLAGS, sourcesOf } from "./settings.js";

const DEFAULT_LAST = 10;

const Flags = z.object({
  last: z.string().optional(),
  format: z.enum(HISTORY_FORMAT_NAMES as [HistoryFormat, ...HistoryFormat[]]),
});

export function registerHistory(program: Command): void {
  const cmd = program
    .command("history")
    .description("list the changes of a watcher's last cycles (time, rule, instance, kind, outcome) from their journals, without any request")
    .option("--last <n>", `the last N cycles that applied something (default ${DEFAULT_LAST})`)
    .addOption(new Option("--format <format>", "output format: text, or json (schemas/history.schema.json)").choices(HISTORY_FORMAT_NAMES).default("text"));
  // the watcher's --state, from the flag, FLOWRULES_STATE or the profile, as `watch` reads it
  addOptions(cmd, { state: PLANNING_FLAGS.state, profile: CONNECTION_FLAGS.profile, config: CONNECTION_FLAGS.config }, { state: "the watcher's state dir" });
  cmd.action(async (raw: Record<string, unknown>, command: Command) => {
    const parsed = Flags.safeParse(raw);
    if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
    const f = parsed.data;
    const src = sourcesOf(raw, process.env);
    const stateDir = PLANNING_FLAGS.state.read(pick(PLANNING_FLAGS.state, src), src);
    if (!stateDir) throw new UserError("history needs the watcher's state dir: pass --state DIR, set FLOWRULES_STATE or give the profile a state");
    const last = f.last === undefined ? DEFAULT_LAST : Number(f.last);
    if (!/^\d+$/.test(f.last ?? "1") || last < 1) throw new UserError(`--last must be a whole number of cycles, at least 1; got "${f.last ?? ""}"`);
    const io = withLogger(processIO(), commandLogger(command));
    process.exitCode = await runLogged(io, "history", { state: stateDir, last }, async (io) =>
      (await import("../commands/history.js")).historyCommand({ stateDir, last, format: f.format }, io),
    );
  });
}
