/** The registry of action kinds. A new kind is a new module here; nothing else enumerates them. */
import * as completeStep from "./complete_step.js";
import * as saveStep from "./save_step.js";
import * as abort from "./abort.js";
import * as report from "./report.js";

export const ACTION_MODULES = [completeStep, saveStep, abort, report] as const;
export const ACTION_KINDS = ACTION_MODULES.map((m) => m.kind);
