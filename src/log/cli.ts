/**
 * `--log-format` is a program-wide option, so `flowrules --log-format json plan` and `flowrules plan --log-format json`
 * both work for every verb, and a verb added later gets it for free. A verb's action reads it with
 * `cmd.optsWithGlobals()`.
 */
import { Option, type Command } from "commander";
import { createLogger } from "./create.js";
import { LOG_FORMATS, type LogFormat, type Logger } from "./types.js";

export function addLogFormatOption(program: Command): Command {
  return program.addOption(
    new Option("--log-format <format>", "stderr log format: text (for people) or json (one JSON object per event)")
      .choices(LOG_FORMATS)
      .default("text"),
  );
}

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
