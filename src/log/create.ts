/** Picks the logger for `--log-format`, with the API key (and any other secret) scrubbed from every line. */
import { jsonLogger } from "./json.js";
import { redactor } from "./redact.js";
import { textLogger } from "./text.js";
import type { LogFormat, Logger } from "./types.js";

export interface CreateLoggerOptions {
  format: LogFormat;
  write: (line: string) => void;
  /** values that must never appear in a log line, e.g. the API key */
  secrets?: ReadonlyArray<string | undefined>;
  now?: () => Date;
}

export function createLogger(opts: CreateLoggerOptions): Logger {
  const scrub = redactor(opts.secrets ?? []);
  return opts.format === "json"
    ? jsonLogger({ write: opts.write, scrub, ...(opts.now ? { now: opts.now } : {}) })
    : textLogger({ write: opts.write, scrub });
}
