/** `flowrules config --format json`: the ConfigReport (./types.ts) as it is, one document. */
import { jsonSafe } from "../escape.js";
import type { ConfigReport } from "./types.js";

export function configJson(r: ConfigReport): string {
  return jsonSafe(`${JSON.stringify(r, null, 2)}\n`);
}
