/** `flowrules forecast --format json`: the document as it is (schemas/forecast.schema.json). */
import type { ForecastFormatter } from "./types.js";

export const forecastJson: ForecastFormatter = (doc) => `${JSON.stringify(doc, null, 2)}\n`;
