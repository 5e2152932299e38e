/** `flowrules history --format json`: the document as it is (schemas/history.schema.json). */
import type { HistoryFormatter } from "./types.js";

export const historyJson: HistoryFormatter = (doc) => `${JSON.stringify(doc, null, 2)}\n`;
