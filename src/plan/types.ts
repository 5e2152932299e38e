/** The plan's types, all inferred from the one schema in schema.ts. */
export type {
  ChangedSinceNote, Plan, PlanError, PlanFile, PlanSummary, PlannedChange, PlannedReport, PlannedRequest, Precondition,
  RemovedRule, ReportGroup, RulePlanSummary, SignedPlan, WorkflowNames,
} from "./schema.js";
