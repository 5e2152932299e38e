/** What `flowrules show` does when it runs (its flags: ../show.ts). */
import type { Command } from "commander";
import { processIO } from "../../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../../log/index.js";
import type { PlanFormat } from "../../render/format-names.js";
import { colorOf } from "../flags.js";

export async function show(file: string, opts: Record<string, unknown>, command: Command): Promise<void> {
  const io = withLogger(processIO(colorOf(command)), commandLogger(command));
  process.exitCode = await runLogged(io, "show", { file }, async (io) =>
    (await import("../../commands/show.js")).showCommand({ file, format: opts.format as PlanFormat }, io),
  );
}
