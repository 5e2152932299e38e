/** The logger of a running verb, from the program-wide `--log-format` (./option.ts declares it). */
import type { Command } from "commander";
import { createLogger } from "./create.js";
import type { LogFormat, Logger } from "./types.js";

export { addLogFormatOption } from "./option.js";

export function logFormatOf(cmd: Command): LogFormat {
  const v = cmd.optsWithGlobals<{ logFormat?: unknown }>().logFormat;
  return v === "json" ? "json" : "text";
}

/**
 * The logger for a running verb: stderr, the chosen format, every API key the run knows of scrubbed (`secrets`: the
 * CLI passes the key variables' values and any key the run resolved, src/cli/verbs/run-verb.ts).
 */
export function commandLogger(
  cmd: Command,
  secrets: ReadonlyArray<string | undefined> = [],
  write = (s: string): void => void process.stderr.write(s),
): Logger {
  return createLogger({ format: logFormatOf(cmd), write, secrets: [...secrets] });
}
