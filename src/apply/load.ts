/** Reads a plan file for apply: every check of src/plan, plus each change checked by its action kind. */
import { checkPlannedChange } from "../actions/index.js";
import { loadPlanFile, type LoadedPlan } from "../plan/read.js";

export function loadPlanForApply(
  file: string,
  expectedBaseUrl: string,
  opts: { compact?: boolean } = {},
): Promise<LoadedPlan> {
  return loadPlanFile(file, expectedBaseUrl, checkPlannedChange, opts);
}
