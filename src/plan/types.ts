/** The plan's types, all inferred from the one schema in schema.ts. */
export type {
  ChangedSinceNote,
  Plan,
  PlanError,
  PlanFile,
  PlanSummary,
  PlannedChange,
  PlannedReport,
  PlannedRequest,
  Precondition,
  RemovedRule,
  ReportGroup,
  RevertNote,
  RulePlanSummary,
  SignedPlan,
  WorkflowNames,
} from "./schema.js";
import type { ChangedSinceNote, RemovedRule } from "./schema.js";

/** What `plan --changed-since REF` adds to a plan (src/ci/changed-plan.ts); every plan view shows it as a note. */
export interface PlanChangedSince {
  changed_since: ChangedSinceNote;
  removed_rules: RemovedRule[];
}
