#!/usr/bin/env node
/** flowrules command-line entry. Errors reach the user as one line, never as a stack trace. */
import { CommanderError } from "commander";
import { buildProgram } from "./program.js";
import { UserError, EXIT_ERROR } from "./exit.js";
import { formatError } from "./errors.js";

async function main(): Promise<void> {
  const program = buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version are "errors" to commander; their text is already printed
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_ERROR;
      return;
    }
    process.stderr.write(`flowrules: ${formatError(err)}\n`);
    process.exitCode = err instanceof UserError ? err.exitCode : EXIT_ERROR;
  }
}

void main();
