/** What `flowrules test` does when it runs (its flags: ../test.ts). */
import type { Command } from "commander";
import { processIO } from "../../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../../log/index.js";
import type { TestResultsFormat } from "../../render/format-names.js";
import { colorOf } from "../flags.js";
import { catalogSettings } from "../settings.js";

export async function test(paths: string[], opts: Record<string, unknown>, command: Command): Promise<void> {
  const io = withLogger(processIO(colorOf(command)), commandLogger(command));
  const { workflows } = catalogSettings(opts, io.env);
  process.exitCode = await runLogged(io, "test", { paths }, async (io) => (await import("../../commands/test.js")).testCommand(
    {
      paths,
      ...(typeof opts.junit === "string" ? { junit: opts.junit } : {}),
      requireTests: opts.requireTests === true,
      rules: (opts.rule as string[] | undefined) ?? [],
      format: opts.format as TestResultsFormat,
      ...(workflows !== undefined ? { workflows } : {}),
    },
    io,
  ));
}
