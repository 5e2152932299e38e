/**
 * `--log-format` is a program-wide option, so `flowrules --log-format json plan` and `flowrules plan --log-format json`
 * both work for every verb, and a verb added later gets it for free. A verb's action reads it with
 * `cmd.optsWithGlobals()` (./cli.ts). Apart from the loggers, so `--help` and a completion Tab do not load them.
 */
import { Option, type Command } from "commander";
import { LOG_FORMATS } from "./types.js";

export function addLogFormatOption(program: Command): Command {
  return program.addOption(
    new Option("--log-format <format>", "stderr log format: text (for people) or json (one JSON object per event)")
      .choices(LOG_FORMATS)
      .default("text"),
  );
}
