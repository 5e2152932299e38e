/** `flowrules forecast` formats by name: a new format is a new module, one line here and its name in ../format-names.ts. */
import { forecastHtml } from "./html.js";
import { forecastJson } from "./json.js";
import { forecastMarkdown } from "./markdown.js";
import { forecastText } from "./text.js";
import type { ForecastFormatter } from "./types.js";
import type { ForecastFormat } from "../format-names.js";

export type { ForecastDocument, ForecastFormatter } from "./types.js";

export const FORECAST_FORMATS = {
  text: forecastText,
  json: forecastJson,
  markdown: forecastMarkdown,
  html: forecastHtml,
} as const satisfies Record<ForecastFormat, ForecastFormatter>;
export { FORECAST_FORMAT_NAMES, type ForecastFormat } from "../format-names.js";
