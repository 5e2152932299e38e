/** `describe --format yaml`: the JSON document as YAML, with no control character left raw (src/render/escape.ts). */
import type { WorkflowStructure } from "../../model/structure.js";
import { yamlSafe } from "../escape.js";

export function describeYaml(s: WorkflowStructure): string {
  return yamlSafe(s);
}
