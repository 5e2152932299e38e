/** One JSON object per line on stderr: `{"ts","level","event",...fields}`, for log collectors (JSON Lines). */
import type { LogFields, Logger, LogLevel } from "./types.js";
import { visibleJson } from "../text/visible-json.js";

export interface JsonLoggerOptions {
  write: (line: string) => void;
  /** final pass over each line (secret redaction) */
  scrub?: (line: string) => string;
  /** the clock, injectable for tests */
  now?: () => Date;
}

/** Values JSON cannot carry as-is: errors become their message, bigints strings, undefined is left out. */
function toJsonValue(_key: string, value: unknown): unknown {
  if (value instanceof Error) return value.message;
  if (typeof value === "bigint") return value.toString();
  return value;
}

const RESERVED = new Set(["ts", "level", "event"]);

export function jsonLogger(opts: JsonLoggerOptions): Logger {
  const now = opts.now ?? (() => new Date());
  const scrub = opts.scrub ?? ((s: string) => s);
  return {
    structured: true,
    event(name: string, fields: LogFields = {}, level: LogLevel = "info"): void {
      const record: Record<string, unknown> = { ts: now().toISOString(), level, event: name };
      // a field may not overwrite the envelope: it is kept under a prefixed name instead
      for (const [k, v] of Object.entries(fields)) record[RESERVED.has(k) ? `field_${k}` : k] = v;
      let line: string;
      try {
        line = JSON.stringify(record, toJsonValue);
      } catch {
        // a circular value must not break the run: log the event without its fields
        line = JSON.stringify({ ts: record.ts, level, event: name, log_error: "fields not serialisable" });
      }
      // names from the service may carry terminal escapes: written as \u escapes, the same values (visible-json.ts)
      opts.write(`${scrub(visibleJson(line))}\n`);
    },
  };
}
