/** The plan's types, all inferred from the one schema in schema.ts. */
export type {
  Plan, PlanChange, PlanError, PlanFile, PlanSummary, PlannedChange, PlannedReport, PlannedRequest, Precondition,
  ReportGroup, RulePlanSummary, SignedPlan,
} from "./schema.js";
