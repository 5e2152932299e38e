/** Apply result formats by name: a new format is a new module and one line here (the CLI's --format choices follow). */
import { applyJson } from "./json.js";
import { applyText } from "./text.js";
import type { ApplyFormatter } from "./types.js";

export type { ApplyFormatter, ApplyReport } from "./types.js";

export const APPLY_FORMATS = {
  text: applyText,
  json: applyJson,
} as const satisfies Record<string, ApplyFormatter>;
export type ApplyFormat = keyof typeof APPLY_FORMATS;
export const APPLY_FORMAT_NAMES = Object.keys(APPLY_FORMATS) as ApplyFormat[];
