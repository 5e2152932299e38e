import type { Workflow } from "../../api/index.js";
import { workflowsJson } from "./json.js";
import { workflowsText } from "./text.js";
import type { WorkflowsFormat } from "../format-names.js";

export const WORKFLOWS_FORMATS = { text: workflowsText, json: workflowsJson } satisfies Record<
  WorkflowsFormat,
  (all: readonly Workflow[]) => string
>;
export { WORKFLOWS_FORMAT_NAMES, type WorkflowsFormat } from "../format-names.js";
