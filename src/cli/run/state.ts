/** What `flowrules state show|clear` does when it runs (its flags: ../state-verb.ts). */
import type { Command } from "commander";
import { processIO } from "../../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../../log/index.js";
import type { StateFormat } from "../../render/format-names.js";
import { colorOf, PLANNING_FLAGS } from "../flags.js";
import { apiKeyFrom, PLANNING_READS, sourcesOf } from "../settings.js";
import { pick } from "../sources.js";

export async function state(action: "show" | "clear", opts: Record<string, unknown>, command: Command): Promise<void> {
  const src = sourcesOf(opts, process.env);
  const dir = PLANNING_READS.state(pick(PLANNING_FLAGS.state, src), src);
  const apiKey = apiKeyFrom(src);
  const io = withLogger(processIO(colorOf(command)), commandLogger(command, process.env, undefined, apiKey ? [apiKey] : []));
  process.exitCode = await runLogged(io, "state", { action, ...(dir ? { dir } : {}) }, async (io) =>
    (await import("../../commands/state-verb.js")).stateVerbCommand({ action, dir, format: opts.format as StateFormat, apiKey }, io),
  );
}
