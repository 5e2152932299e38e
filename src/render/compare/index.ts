/** Views of `plan --compare` by format name, one module each; the same names as the plan's formats (PLAN_FORMATS). */
import type { PlanFormat } from "../plan/index.js";
import { html } from "./html.js";
import { json } from "./json.js";
import { markdown } from "./markdown.js";
import { text } from "./text.js";
import type { CompareFormatter } from "./types.js";

export const COMPARE_FORMATS = { text, markdown, json, html } as const satisfies Record<PlanFormat, CompareFormatter>;
export type { CompareFormatter } from "./types.js";
