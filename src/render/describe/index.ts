import type { WorkflowStructure } from "../../model/structure.js";
import { describeJson } from "./json.js";
import { describeText } from "./text.js";
import { describeYaml } from "./yaml.js";

export const DESCRIBE_FORMATS = { text: describeText, json: describeJson, yaml: describeYaml } satisfies Record<string, (s: WorkflowStructure) => string>;
export type DescribeFormat = keyof typeof DESCRIBE_FORMATS;
