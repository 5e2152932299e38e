/**
 * A run whose event loop runs dry while its command has not settled did not finish: something it awaited can never
 * answer (as when the HTTP library dropped requests it refused to send). Node then ends the process with
 * exit 0 and no output, which CI reads as success. This turns that into an error: exit 1 and one line.
 */
import { EXIT_ERROR } from "../model/errors.js";
import { ENV } from "../model/env-names.js";

export const UNFINISHED_MESSAGE = `flowrules: stopped with work unfinished: the run was left waiting for something that can never answer (nothing was reported as done); run again with ${ENV.debug}=1 and report it\n`;

/** Watches one run: when the process is about to end and `settled()` is still false, it fails the run. */
export function failIfUnfinished(settled: () => boolean, write: (text: string) => void): void {
  process.once("beforeExit", () => {
    if (settled()) return;
    process.exitCode = EXIT_ERROR;
    write(UNFINISHED_MESSAGE);
  });
}
