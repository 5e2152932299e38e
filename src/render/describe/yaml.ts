/** `describe --format yaml`: the JSON document as YAML. */
import { stringify } from "yaml";
import type { WorkflowStructure } from "../../model/structure.js";

export function describeYaml(s: WorkflowStructure): string {
  return stringify(s, { lineWidth: 0 });
}
