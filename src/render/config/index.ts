/** Views of `flowrules config` (one module per format). */
import type { ConfigFormat } from "../format-names.js";
import { configJson } from "./json.js";
import { configText } from "./text.js";
import type { ConfigReport } from "./types.js";

export const CONFIG_FORMATS = { text: configText, json: configJson } satisfies Record<
  ConfigFormat,
  (report: ConfigReport) => string
>;
export type { ConfigReport, ConfigSetting } from "./types.js";
