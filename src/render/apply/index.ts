/** Apply result formats by name: a new format is a new module, one line here and its name in ../format-names.ts (the CLI's --format choices follow). */
import { applyJson } from "./json.js";
import { applyText } from "./text.js";
import type { ApplyFormatter } from "./types.js";
import type { ApplyFormat } from "../format-names.js";

export type { ApplyFormatter, ApplyReport } from "./types.js";

export const APPLY_FORMATS = {
  text: applyText,
  json: applyJson,
} as const satisfies Record<ApplyFormat, ApplyFormatter>;
export { APPLY_FORMAT_NAMES, type ApplyFormat } from "../format-names.js";
