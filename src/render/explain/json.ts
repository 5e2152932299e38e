/** `flowrules explain --format json`: the Explanation as one JSON document, for tools. */
import type { Explanation } from "../../engine/explain/types.js";
import { jsonSafe } from "../escape.js";

export function explainJson(e: Explanation): string {
  return jsonSafe(`${JSON.stringify({ format_version: 1, ...e }, null, 2)}\n`);
}
