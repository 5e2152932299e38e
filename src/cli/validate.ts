/** `flowrules validate [paths...]`: schema, JSONata, aliases, names and conflicts, without any request. */
import { Option, type Command } from "commander";
import { processIO } from "../log/command-io.js";
import { commandLogger, runLogged, withLogger, type Logger } from "../log/index.js";
import { loadRules } from "../rules/index.js";
import { DIAGNOSTIC_FORMATS, DIAGNOSTIC_FORMAT_NAMES, type DiagnosticFormat } from "../render/diagnostics/index.js";
import { EXIT_ERROR, EXIT_OK } from "../model/errors.js";

export interface ValidateOptions {
  format: DiagnosticFormat;
}

/** Colours only on a terminal and never with NO_COLOR (https://no-color.org). */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !("NO_COLOR" in process.env && process.env.NO_COLOR !== "");
}

/** Runs the validation and returns the output and exit code (kept apart from process I/O for tests). */
export async function runValidate(
  paths: string[],
  opts: ValidateOptions,
  color = false,
  log?: Logger,
): Promise<{ output: string; exitCode: number }> {
  const result = await loadRules(paths);
  for (const d of result.diagnostics) {
    const { file, line, col, severity, code, message, rule } = d;
    log?.event("rule.diagnostic", { file, line, col, severity, code, message, ...(rule ? { rule } : {}) }, severity === "error" ? "error" : "warn");
  }
  if (result.ruleSet) log?.event("rules.loaded", { files: result.ruleSet.files.length, rules: result.ruleSet.rules.length });
  const errors = result.diagnostics.some((d) => d.severity === "error");
  const output = DIAGNOSTIC_FORMATS[opts.format](result.diagnostics, {
    color,
    ...(result.ruleSet ? { files: result.ruleSet.files.length, rules: result.ruleSet.rules.length } : {}),
  });
  return { output, exitCode: errors ? EXIT_ERROR : EXIT_OK };
}

export function registerValidate(program: Command): void {
  program
    .command("validate")
    .description("check rule files (schema, JSONata, aliases, names, conflicts) without any request")
    .argument("[paths...]", "files or folders of *.yaml / *.yml", ["rules/"])
    .addOption(new Option("--format <format>", "output format").choices(DIAGNOSTIC_FORMAT_NAMES).default("text"))
    .action(async (paths: string[], opts: ValidateOptions, command: Command) => {
      try {
        const io = withLogger(processIO(), commandLogger(command));
        process.exitCode = await runLogged(io, "validate", { paths, format: opts.format }, async (io) => {
          const { output, exitCode } = await runValidate(paths, opts, useColor(), io.log);
          io.stdout(output);
          return exitCode;
        });
      } catch (err) {
        // loadRules does not throw by design; anything that still does becomes one line, never a stack trace
        process.stderr.write(`flowrules validate: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = EXIT_ERROR;
      }
    });
}
