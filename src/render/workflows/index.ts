import type { Workflow } from "../../api/index.js";
import { workflowsJson } from "./json.js";
import { workflowsText } from "./text.js";

export const WORKFLOWS_FORMATS = { text: workflowsText, json: workflowsJson } satisfies Record<string, (all: readonly Workflow[]) => string>;
export type WorkflowsFormat = keyof typeof WORKFLOWS_FORMATS;
