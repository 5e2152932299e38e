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
 * The logger for a running verb: stderr, the chosen format, the API key scrubbed — FLOWRULES_API_KEY's and any other
 * key the run resolved (a profile's api_key_env), given in `secrets`.
 */
export function commandLogger(
  cmd: Command,
  env: NodeJS.ProcessEnv = process.env,
  write = (s: string): void => void process.stderr.write(s),
  secrets: ReadonlyArray<string | undefined> = [],
): Logger {
  return createLogger({ format: logFormatOf(cmd), write, secrets: [env.FLOWRULES_API_KEY, ...secrets] });
}
