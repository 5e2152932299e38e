/** Plan formats by name: a new format is a new module and one line here. */
import { html } from "./html.js";
import { json } from "./json.js";
import { markdown } from "./markdown.js";
import { text } from "./text.js";
import type { PlanFormatter } from "./types.js";

export const PLAN_FORMATS = { text, markdown, json, html } as const satisfies Record<string, PlanFormatter>;
export type PlanFormat = keyof typeof PLAN_FORMATS;
export type { PlanFormatter, PlanRenderOptions } from "./types.js";
