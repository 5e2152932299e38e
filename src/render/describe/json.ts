/** `describe --format json`: the workflow's structure document (docs/workflows.md), the same as a catalog entry. */
import type { WorkflowStructure } from "../../model/structure.js";

export function describeJson(s: WorkflowStructure): string {
  return `${JSON.stringify(s, null, 2)}\n`;
}
