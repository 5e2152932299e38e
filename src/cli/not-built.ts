import type { Command } from "commander";
import { EXIT_ERROR } from "./exit.js";

/** Placeholder action for a verb whose implementation has not landed yet: says so and exits 1. */
export function notBuilt(cmd: Command): void {
  cmd.action(() => {
    process.stderr.write(`flowrules ${cmd.name()}: not built yet in this version.\n`);
    process.exitCode = EXIT_ERROR;
  });
}
