/**
 * Every action kind, in the order plans list their changes and summaries count them. A new kind is its module and one
 * entry here; index.ts derives everything else from this list (and test/actions/dummy-kind.test.ts replaces it, to show
 * that a kind needs nothing more).
 */
import { abort } from "./abort.js";
import { completeStep } from "./complete_step.js";
import { report } from "./report.js";
import { saveStep } from "./save_step.js";

export const ACTIONS = [completeStep, saveStep, abort, report] as const;
