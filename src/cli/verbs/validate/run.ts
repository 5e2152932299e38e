/**
 * What `flowrules validate` does when it runs (its flags: ./flags.ts). The one verb that does not go through
 * ../run-verb.ts: its start-up loads no zod (test/cli/startup.test.ts), so its two inputs are checked by hand.
 */
import type { Command } from "commander";
import { useColor } from "../../../log/command-io.js";
import { runLogged } from "../../../log/index.js";
import { EXIT_ERROR, UserError } from "../../../model/errors.js";
import { errorMessage } from "../../../model/guards.js";
import { DIAGNOSTIC_FORMAT_NAMES } from "../../../render/format-names.js";
import { runValidate } from "../../../commands/validate.js";
import { catalogSettingsFrom, sourcesWithoutProfile } from "../../sources.js";
import { verbIO } from "../io.js";

type DiagnosticFormat = (typeof DIAGNOSTIC_FORMAT_NAMES)[number];
const isFormat = (v: unknown): v is DiagnosticFormat => DIAGNOSTIC_FORMAT_NAMES.some((f) => f === v);
const isPaths = (v: unknown): v is string[] => Array.isArray(v) && v.every((p) => typeof p === "string");

/** validate's own run: whatever still throws past the rules' loader becomes one line, never a stack trace. */
export async function run(command: Command): Promise<void> {
  try {
    const [paths] = command.processedArgs;
    const raw = command.opts();
    const format = raw.format;
    if (!isPaths(paths) || !isFormat(format))
      throw new UserError(`invalid options: --format must be one of ${DIAGNOSTIC_FORMAT_NAMES.join(", ")}`);
    const io = verbIO(command);
    process.exitCode = await runLogged(io, "validate", { paths, format }, async (io) => {
      // the catalog and the service it must come from: flag, environment, profile (../../settings.ts)
      // (the settings resolver, its zod schemas and the profile's YAML load only when a config file or profile is in play)
      const src =
        sourcesWithoutProfile({ ...raw }, io.env) ?? (await import("../../settings.js")).sourcesOf({ ...raw }, io.env);
      const { output, exitCode, notes } = await runValidate(
        paths,
        { format, ...catalogSettingsFrom(src) },
        useColor(io),
        io.log,
      );
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
