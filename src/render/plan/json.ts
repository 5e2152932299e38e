/** The JSON plan (docs/design.md, "The JSON plan"): the very bytes of the plan file, from its one writer. */
import { planFileText } from "../../plan/write.js";
import type { PlanFormatter } from "./types.js";

export const json: PlanFormatter = (plan) => planFileText(plan);
