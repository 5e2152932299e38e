import { ENV } from "../model/env-names.js";
import { textSafeLines } from "../render/escape.js";

/**
 * Turns any thrown value into one line for the user. Stack traces only with the debug variable (ENV.debug) set to 1. A message may quote
 * the service or a file: its control characters are shown, not obeyed (src/render/escape.ts).
 */
export function formatError(err: unknown): string {
  if (err instanceof Error) {
    const debug = process.env[ENV.debug] === "1" && err.stack ? `\n${err.stack}` : "";
    return textSafeLines(`${err.message}${debug}`);
  }
  return textSafeLines(String(err));
}
