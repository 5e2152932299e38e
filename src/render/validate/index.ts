/** The diagnostic formats by name. */
import type { DiagnosticFormatter } from "./types.js";
import { text } from "./text.js";
import { json } from "./json.js";
import { github } from "./github.js";

import type { DiagnosticFormat } from "../format-names.js";

export const DIAGNOSTIC_FORMATS = { text, json, github } satisfies Record<DiagnosticFormat, DiagnosticFormatter>;
export { DIAGNOSTIC_FORMAT_NAMES, type DiagnosticFormat } from "../format-names.js";

export type { DiagnosticFormatter, DiagnosticFormatOptions } from "./types.js";
export { text, json, github };
