/** A logger that drops every event: the default for commands run in-process (tests, the demo). */
import type { Logger } from "./types.js";

export const nullLogger: Logger = { structured: false, event: () => undefined };
