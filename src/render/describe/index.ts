import type { WorkflowStructure } from "../../model/structure.js";
import { describeJson } from "./json.js";
import { describeText } from "./text.js";
import { describeYaml } from "./yaml.js";
import type { DescribeFormat } from "../format-names.js";

export const DESCRIBE_FORMATS = { text: describeText, json: describeJson, yaml: describeYaml } satisfies Record<
  DescribeFormat,
  (s: WorkflowStructure) => string
>;
export { DESCRIBE_FORMAT_NAMES, type DescribeFormat } from "../format-names.js";
