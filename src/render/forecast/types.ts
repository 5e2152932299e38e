/** What every view of `flowrules forecast` reads: the document of ./json-schema.ts. */
import type { ForecastDocument } from "./json-schema.js";

export type { ForecastDocument, ForecastRuleEntry, ForecastRulePointEntry } from "./json-schema.js";

export type ForecastFormatter = (doc: ForecastDocument) => string;
