/**
 * Structured logging for scheduled runs: a command reports what happens as named events with flat fields, and the
 * logger chosen by `--log-format` decides what reaches stderr. Commands never format log lines themselves.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Flat, JSON-serialisable fields; nested objects are allowed but log collectors index flat keys best. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  /** one event, e.g. `run.started`, `rule.planned`, `request.retried`, `run.finished` */
  event(name: string, fields?: LogFields, level?: LogLevel): void;
  /**
   * true when the events are the stderr output (json): commands then leave out their human stderr lines
   * (progress, request counts, diagnostics as text) so that every stderr line parses as JSON.
   */
  readonly structured: boolean;
}

export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
