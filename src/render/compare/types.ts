/** Every view of `plan --compare` is one module exporting one function of this type (as the plan formats are). */
import type { ComparePlan } from "../../engine/impact.js";
import type { PlanRenderOptions } from "../plan/types.js";

export type CompareFormatter = (plan: ComparePlan, options: PlanRenderOptions) => string;
