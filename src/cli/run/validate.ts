/** What `flowrules validate` does when it runs (its flags: ../validate.ts). */
import type { Command } from "commander";
import { processIO, useColor } from "../../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../../log/index.js";
import { EXIT_ERROR, UserError } from "../../model/errors.js";
import { errorMessage } from "../../model/guards.js";
import { runValidate, type ValidateOptions } from "../../commands/validate.js";
import { colorOf } from "../flags.js";
import { catalogSettingsFrom, sourcesWithoutProfile } from "../sources.js";

export async function validate(paths: string[], opts: Record<string, unknown>, command: Command): Promise<void> {
  try {
    const io = withLogger(processIO(colorOf(command)), commandLogger(command));
    process.exitCode = await runLogged(io, "validate", { paths, format: opts.format }, async (io) => {
      // the catalog and the service it must come from: flag, environment, profile (src/cli/settings.ts)
      // (the settings resolver, its zod schemas and the profile's YAML load only when a config file or profile is in play)
      const src = sourcesWithoutProfile({ ...opts }, io.env) ?? (await import("../settings.js")).sourcesOf({ ...opts }, io.env);
      const options: ValidateOptions = { format: opts.format as ValidateOptions["format"], ...catalogSettingsFrom(src) };
      const { output, exitCode, notes } = await runValidate(paths, options, useColor(io), io.log);
      for (const n of notes) {
        io.log?.event("validate.note", { message: n }, "warn");
        if (!io.log?.structured) io.stderr(`note: ${n}\n`);
      }
      io.stdout(output);
      return exitCode;
    });
  } catch (err) {
    // a refused setting (a config file's line) is the user's to fix, said as every verb says it
    if (err instanceof UserError) throw err;
    // loadRules does not throw by design; anything that still does becomes one line, never a stack trace
    process.stderr.write(`flowrules validate: internal error: ${errorMessage(err)}\n`);
    process.exitCode = EXIT_ERROR;
  }
}
