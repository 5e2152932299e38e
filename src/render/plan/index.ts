/** Plan formats by name: a new format is a new module, one line here and its name in ../format-names.ts. */
import { html } from "./html.js";
import { json, jsonPieces } from "./json.js";
import { markdown } from "./markdown.js";
import { text } from "./text.js";
import type { PlanFormatter, PlanPiecesFormatter } from "./types.js";
import type { PlanFormat } from "../format-names.js";

export const PLAN_FORMATS = { text, markdown, json, html } as const satisfies Record<PlanFormat, PlanFormatter>;
/** Formats written in pieces by a plan run: the JSON plan, whose rows grow with the tenant (text and markdown cap theirs). */
export const PLAN_FORMAT_PIECES: Partial<Record<PlanFormat, PlanPiecesFormatter>> = { json: jsonPieces };
export { PLAN_FORMAT_NAMES, type PlanFormat } from "../format-names.js";
export type { PlanFormatter, PlanPiecesFormatter, PlanRenderOptions } from "./types.js";
