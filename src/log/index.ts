/** Structured logging: `--log-format text|json`, a tiny `event(name, fields)` interface, three implementations. */
export type { LogFields, LogFormat, Logger, LogLevel } from "./types.js";
export { LOG_FORMATS } from "./types.js";
export { jsonLogger } from "./json.js";
export { textLogger } from "./text.js";
export { nullLogger } from "./null.js";
export { redactor } from "./redact.js";
export { createLogger, type CreateLoggerOptions } from "./create.js";
export { clientEventLogger } from "./client-events.js";
export { addLogFormatOption, commandLogger, logFormatOf } from "./cli.js";
export { withLogger } from "./io.js";
export { runLogged } from "./run.js";
