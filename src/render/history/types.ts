/** What every view of `flowrules history` reads: the document of ./json-schema.ts. */
import type { HistoryDocument } from "./json-schema.js";

export type { HistoryChangeEntry, HistoryCycleEntry, HistoryDocument, HistoryOutcome } from "./json-schema.js";

export type HistoryFormatter = (doc: HistoryDocument) => string;
