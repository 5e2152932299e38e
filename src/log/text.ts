/**
 * The default log format. Commands keep printing their human stderr lines as before (progress, request counts,
 * diagnostics); of the events, only the few a person watching a terminal or a CI log wants to see are printed, as
 * one plain sentence each. Everything else is left to `--log-format json`.
 */
import type { LogFields, Logger, LogLevel } from "./types.js";
import { plural } from "../text/plural.js";
import { ENV } from "../model/env-names.js";

export interface TextLoggerOptions {
  write: (line: string) => void;
  scrub?: (line: string) => string;
}

const seconds = (ms: unknown): string => (typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "a while");

/** Event → human sentence; events not listed here print nothing in text mode. */
const SENTENCES: Record<string, (f: LogFields) => string | undefined> = {
  "request.retried": (f) =>
    // a service that cannot be reached is said once, by the error naming its address after the retries
    /^(could not connect|connect timeout)/.test(String(f.reason))
      ? undefined
      : `retrying ${String(f.method)} ${String(f.path)} (attempt ${String(f.attempt)}: ${String(f.reason)}) in ${seconds(f.delay_ms)}`,
  "request.rate_limited": (f) => {
    if (f.source === "server") return `the service answered 429: every request waits ${seconds(f.delay_ms)}`;
    if (f.reason === "quota")
      return `the service reports its rate limit used up: waiting ${seconds(f.delay_ms)} for it to reset`;
    // the window's own pace: a line only for a pause long enough to look like a hang
    if (typeof f.delay_ms !== "number" || f.delay_ms < 5_000) return undefined;
    const per = typeof f.window_ms === "number" ? `${Math.round(f.window_ms / 1000)} s` : "60 s";
    const budget = typeof f.budget === "number" ? plural(f.budget, "request") : "its requests";
    // the limit is the client's own: say which setting it is, so a service without one (the sandbox) is not waited on
    return `rate limit: ${budget} sent in the last ${per}, waiting ${seconds(f.delay_ms)} for the window (the client's limit: --rate-limit, ${ENV.rateLimit} or a profile's rate_limit; 0 = off)`;
  },
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
