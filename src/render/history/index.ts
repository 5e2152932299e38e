/** `flowrules history` formats by name: a new format is a new module, one line here and its name in ../format-names.ts. */
import { historyJson } from "./json.js";
import { historyText } from "./text.js";
import type { HistoryFormatter } from "./types.js";
import type { HistoryFormat } from "../format-names.js";

export type { HistoryDocument, HistoryFormatter } from "./types.js";

export const HISTORY_FORMATS = {
  text: historyText,
  json: historyJson,
} as const satisfies Record<HistoryFormat, HistoryFormatter>;
export { HISTORY_FORMAT_NAMES, type HistoryFormat } from "../format-names.js";
