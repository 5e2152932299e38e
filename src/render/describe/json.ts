/** `describe --format json`: the workflow's structure document (docs/workflows.md), the same as a catalog entry. */
import type { WorkflowStructure } from "../../model/structure.js";
import { jsonSafe } from "../escape.js";

export function describeJson(s: WorkflowStructure): string {
  return jsonSafe(`${JSON.stringify(s, null, 2)}\n`);
}
