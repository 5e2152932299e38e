/**
 * The IO of a running verb, apart from ./run-verb.ts (zod) so that `validate` builds it without loading zod
 * (test/cli/startup.test.ts): stdout, stderr, the environment, colours as `--color` asks, and a logger
 * (`--log-format`) that scrubs the key variable's value and every key the run resolved (`secrets`).
 */
import type { Command } from "commander";
import { processIO, type CommandIO } from "../../log/command-io.js";
import { commandLogger, withLogger } from "../../log/index.js";
import { colorOf } from "../flags.js";
import { envKey } from "../../model/env-names.js";

export function verbIO(command: Command, secrets: ReadonlyArray<string | undefined> = []): CommandIO {
  return withLogger(
    processIO(process.env, colorOf(command)),
    commandLogger(command, [envKey(process.env), ...secrets]),
  );
}
