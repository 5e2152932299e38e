/** Views of `flowrules state show` (one module per format) and the line of `flowrules state clear`. */
import type { StateReport } from "../../state/show.js";
import { stateJson } from "./json.js";
import { stateText } from "./text.js";

export { clearText } from "./text.js";

export const STATE_FORMATS = { text: stateText, json: stateJson } satisfies Record<string, (report: StateReport) => string>;
export type StateFormat = keyof typeof STATE_FORMATS;
