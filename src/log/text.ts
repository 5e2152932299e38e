/**
 * The default log format. Commands keep printing their human stderr lines as before (progress, request counts,
 * diagnostics); of the events, only the few a person watching a terminal or a CI log wants to see are printed, as
 * one plain sentence each. Everything else is left to `--log-format json`.
 */
import type { LogFields, Logger, LogLevel } from "./types.js";

export interface TextLoggerOptions {
  write: (line: string) => void;
  scrub?: (line: string) => string;
}

const seconds = (ms: unknown): string => (typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "a while");

/** Event → human sentence; events not listed here print nothing in text mode. */
const SENTENCES: Record<string, (f: LogFields) => string | undefined> = {
  "request.retried": (f) =>
    `retrying ${String(f.method)} ${String(f.path)} (attempt ${String(f.attempt)}: ${String(f.reason)}) in ${seconds(f.delay_ms)}`,
  "request.rate_limited": (f) =>
    // the local limiter holding requests back is the normal, configured pace: not worth a line
    f.source === "server" ? `the service answered 429: every request waits ${seconds(f.delay_ms)}` : undefined,
};

export function textLogger(opts: TextLoggerOptions): Logger {
  const scrub = opts.scrub ?? ((s: string) => s);
  return {
    structured: false,
    event(name: string, fields: LogFields = {}, _level: LogLevel = "info"): void {
      const sentence = SENTENCES[name]?.(fields);
      if (sentence !== undefined) opts.write(scrub(`flowrules: ${sentence}\n`));
    },
  };
}
