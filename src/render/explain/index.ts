/** Explain formats by name: a new format is a new module, one line here and its name in ../format-names.ts (the CLI's --format choices follow). */
import type { Explanation } from "../../engine/explain/index.js";
import { explainJson } from "./json.js";
import { explainText } from "./text.js";
import type { ExplainFormat } from "../format-names.js";

export type ExplainFormatter = (explanation: Explanation, options: { color: boolean }) => string;

export const EXPLAIN_FORMATS = {
  text: (e, { color }) => explainText(e, color),
  json: (e) => explainJson(e),
} as const satisfies Record<ExplainFormat, ExplainFormatter>;
export { EXPLAIN_FORMAT_NAMES, type ExplainFormat } from "../format-names.js";
