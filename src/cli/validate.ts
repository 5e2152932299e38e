/** `flowrules validate [paths...]`: schema, JSONata, aliases, names and conflicts, without any request. */
import { Option, type Command } from "commander";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger } from "../log/index.js";
import { DIAGNOSTIC_FORMAT_NAMES } from "../render/validate/index.js";
import { EXIT_ERROR, UserError } from "../model/errors.js";
import type { ValidateOptions } from "../commands/validate.js";
import { errorMessage } from "../model/guards.js";
import { addProfileOptions, catalogSettings, workflowsOption } from "./settings.js";

export function registerValidate(program: Command): void {
  const cmd = program
    .command("validate")
    .description("check rule files (schema, JSONata, aliases, names, conflicts) without any request")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .addOption(new Option("--format <format>", "output format").choices(DIAGNOSTIC_FORMAT_NAMES).default("text"))
    .addOption(workflowsOption("workflow catalog to check steps, fields and values against (default flowrules.workflows.json)"));
  addProfileOptions(cmd)
    .action(async (paths: string[], opts: ValidateOptions, command: Command) => {
      try {
        const io = withLogger(processIO(), commandLogger(command));
        process.exitCode = await runLogged(io, "validate", { paths, format: opts.format }, async (io) => {
          const { runValidate, useColor } = await import("../commands/validate.js");
          // the catalog and the service it must come from: flag, environment, profile (src/cli/settings.ts)
          const { output, exitCode, notes } = await runValidate(paths, { ...opts, ...catalogSettings({ ...opts }, io.env) }, useColor(), io.log);
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
    });
}
