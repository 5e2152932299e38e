/** `flowrules history` formats by name: a new format is a new module and one line here (--format follows). */
import { historyJson } from "./json.js";
import { historyText } from "./text.js";
import type { HistoryFormatter } from "./types.js";

export type { HistoryDocument, HistoryFormatter } from "./types.js";

export const HISTORY_FORMATS = {
  text: historyText,
  json: historyJson,
} as const satisfies Record<string, HistoryFormatter>;
export type HistoryFormat = keyof typeof HISTORY_FORMATS;
export const HISTORY_FORMAT_NAMES = Object.keys(HISTORY_FORMATS) as HistoryFormat[];
