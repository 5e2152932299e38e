/**
 * The plan: the one object every renderer reads and `apply` executes. Its JSON form (format_version 1) is the
 * DESIGN section 3 contract; keys may be added, never renamed.
 */
import type { MutatingKind } from "../rules/types.js";

export interface PlannedRequest {
  method: "POST";
  /** relative to the base URL, e.g. /instances/123/complete_step/ or /instances/bulk/abort */
  path: string;
  body: unknown;
}

/** What must still hold at apply time for the change to be sent. */
export interface Precondition {
  status: "running";
  /** for step kinds: the step must still be active */
  active_step_id?: number;
  /** the instance's last_updated_time when planned, when known (a later value means it changed since) */
  last_updated_time?: string;
}

export interface PlannedChange {
  /** stable id of the change within the plan: `${rule}:${kind}:${instance_id}[:${step_id}]` */
  id: string;
  rule: string;
  instance_id: number;
  instance_name: string;
  process_id: number;
  kind: MutatingKind;
  step_id?: number;
  request: PlannedRequest;
  /** the values this change touches, before and after (keys: `status`, `step <id>`, `field <alias|action id>`) */
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  precondition: Precondition;
}

export interface ReportGroup {
  key: string;
  count: number;
  instance_ids: number[];
}

export interface PlannedReport {
  rule: string;
  title: string;
  group_by: string;
  columns: string[];
  groups: ReportGroup[];
  /** one row per matched instance, keyed by column */
  rows: Array<Record<string, unknown>>;
}

export interface PlanError {
  rule?: string;
  instance_id?: number;
  /** "limit" | "conflict" | "evaluation" | "resolve" | "api" */
  code: string;
  message: string;
}

export interface RulePlanSummary {
  name: string;
  workflow_id: number | null;
  workflow_name?: string;
  /** instances returned by the server-side selection */
  selected: number;
  /** instances for which `when` held */
  matched: number;
  changes: number;
  /** matched instances an action did not apply to (not running, step not active), shown rather than failed */
  skipped: number;
  status: "ok" | "failed";
}

export interface PlanSummary {
  complete_step: number;
  save_step: number;
  abort: number;
  reports: number;
  errors: number;
  /** requests made while planning, when planned against a service */
  requests?: number;
}

export interface Plan {
  format_version: 1;
  flowrules_version: string;
  created_at: string;
  base_url: string;
  rules_digest: string;
  rules: RulePlanSummary[];
  changes: PlannedChange[];
  reports: PlannedReport[];
  errors: PlanError[];
  summary: PlanSummary;
}
