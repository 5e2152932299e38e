/** What `flowrules history` does when it runs (its flags: ../history.ts). */
import type { Command } from "commander";
import { z } from "zod";
import { processIO } from "../../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../../log/index.js";
import { DEFAULT_HISTORY_CYCLES } from "../../model/defaults.js";
import { UserError } from "../../model/errors.js";
import { HISTORY_FORMAT_NAMES } from "../../render/format-names.js";
import { colorOf, PLANNING_FLAGS } from "../flags.js";
import { PLANNING_READS, sourcesOf } from "../settings.js";
import { pick } from "../sources.js";

const Flags = z.object({
  last: z.string().optional(),
  rule: z.string().optional(),
  instance: z.string().optional(),
  format: z.enum(HISTORY_FORMAT_NAMES),
});

export async function history(raw: Record<string, unknown>, command: Command): Promise<void> {
  const parsed = Flags.safeParse(raw);
  if (!parsed.success) throw new UserError(`invalid options: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const f = parsed.data;
  const src = sourcesOf(raw, process.env);
  const stateDir = PLANNING_READS.state(pick(PLANNING_FLAGS.state, src), src);
  if (!stateDir) throw new UserError("history needs the watcher's state dir: pass --state DIR, set FLOWRULES_STATE or give the profile a state");
  const last = f.last === undefined ? DEFAULT_HISTORY_CYCLES : Number(f.last);
  if (!/^\d+$/.test(f.last ?? "1") || last < 1) throw new UserError(`--last must be a whole number of cycles, at least 1; got "${f.last ?? ""}"`);
  if (f.instance !== undefined && !/^\d+$/.test(f.instance)) throw new UserError(`--instance must be an instance id (a whole number); got "${f.instance}"`);
  const filter = { ...(f.rule !== undefined ? { rule: f.rule } : {}), ...(f.instance !== undefined ? { instance: Number(f.instance) } : {}) };
  const io = withLogger(processIO(colorOf(command)), commandLogger(command));
  process.exitCode = await runLogged(io, "history", { state: stateDir, last }, async (io) =>
    (await import("../../commands/history.js")).historyCommand({ stateDir, last, format: f.format, filter }, io),
  );
}
