/** Views of `flowrules state show` (one module per format) and the line of `flowrules state clear`. */
import type { StateReport } from "../../state/show.js";
import { stateJson } from "./json.js";
import { stateText } from "./text.js";
import type { StateFormat } from "../format-names.js";

export { clearText } from "./text.js";

export const STATE_FORMATS = { text: stateText, json: stateJson } satisfies Record<
  StateFormat,
  (report: StateReport) => string
>;
export { STATE_FORMAT_NAMES, type StateFormat } from "../format-names.js";
