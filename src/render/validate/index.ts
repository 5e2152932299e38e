/** The diagnostic formats by name. */
import type { DiagnosticFormatter } from "./types.js";
import { text } from "./text.js";
import { json } from "./json.js";
import { github } from "./github.js";

export const DIAGNOSTIC_FORMATS = { text, json, github } satisfies Record<string, DiagnosticFormatter>;
export type DiagnosticFormat = keyof typeof DIAGNOSTIC_FORMATS;
export const DIAGNOSTIC_FORMAT_NAMES = Object.keys(DIAGNOSTIC_FORMATS) as DiagnosticFormat[];

export type { DiagnosticFormatter, DiagnosticFormatOptions } from "./types.js";
export { text, json, github };
