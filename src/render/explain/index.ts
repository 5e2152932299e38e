/** Explain formats by name: a new format is a new module and one line here (the CLI's --format choices follow). */
import type { Explanation } from "../../engine/explain/index.js";
import { explainJson } from "./json.js";
import { explainText } from "./text.js";

export type ExplainFormatter = (explanation: Explanation, options: { color: boolean }) => string;

export const EXPLAIN_FORMATS = {
  text: (e, { color }) => explainText(e, color),
  json: (e) => explainJson(e),
} as const satisfies Record<string, ExplainFormatter>;
export type ExplainFormat = keyof typeof EXPLAIN_FORMATS;
export const EXPLAIN_FORMAT_NAMES = Object.keys(EXPLAIN_FORMATS) as ExplainFormat[];
