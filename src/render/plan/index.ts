/** Plan formats by name: a new format is a new module, one line here and its name in ../format-names.ts. */
import { html } from "./html.js";
import { json } from "./json.js";
import { markdown } from "./markdown.js";
import { text } from "./text.js";
import type { PlanFormatter } from "./types.js";
import type { PlanFormat } from "../format-names.js";

export const PLAN_FORMATS = { text, markdown, json, html } as const satisfies Record<PlanFormat, PlanFormatter>;
export { PLAN_FORMAT_NAMES, type PlanFormat } from "../format-names.js";
export type { PlanFormatter, PlanRenderOptions } from "./types.js";
