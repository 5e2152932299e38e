/**
 * What `flowrules explain` (and a failing rule test) says about one rule and one instance. Plain data: the text and
 * JSON renderers, and the test runner's failure messages, all read this one shape.
 */
import type { PlannedChange, WorkflowNames } from "../../plan/types.js";
import type { FieldRef } from "../../model/rule-types.js";

/** pass / fail as checked on the record; unknown when the record cannot tell (e.g. lead_user, organization). */
export type FilterResult = "pass" | "fail" | "unknown";

export interface FilterCheck {
  /** the `select` key, a 4.2 query parameter */
  key: string;
  /** the value as written in the rule */
  value: unknown;
  /** the value the server would be sent, when it differs (relative date-times resolved at `now`) */
  resolved?: unknown;
  result: FilterResult;
  /** what the instance has, in words: "status running", "tags: travel, q4", "no deadline" */
  actual: string;
}

export interface FieldExplanation {
  alias: string;
  step: number;
  action: number;
  /** false when the field has no value in this instance (then `fields.<alias>` is absent) */
  present: boolean;
  /** the plain value `fields.<alias>` holds */
  value?: unknown;
}

/** `when` or one of its top-level `and` / `or` operands, evaluated on its own in the rule's context. */
export interface ClauseExplanation {
  source: string;
  /** the JSONata result (undefined: JSONata yielded nothing, e.g. a missing field) */
  value?: unknown;
  holds: boolean;
  error?: string;
  /** set when this clause is itself an `and` / `or` of parts */
  op?: "and" | "or";
  parts?: ClauseExplanation[];
}

export interface ReportExplanation {
  title: string;
  group_by: string;
  /** the groups the instance counts under */
  keys: string[];
  row: Record<string, unknown>;
}

/** How long a step the rule's waiting helpers name has waited, on this instance (absent values: not active). */
export interface WaitingExplanation {
  /** the step as written in the call; null for the instance's first active step (a call without a step) */
  step: string | number | null;
  since?: string;
  days?: number;
  hours?: number;
}

export interface RuleExplanation {
  rule: string;
  workflow_id: number | null;
  /** whether the instance belongs to the rule's workflow; nothing else is checked when it does not */
  in_workflow: boolean;
  filters: FilterCheck[];
  /** fail when a filter fails; unknown when none fails but one cannot be checked */
  selected: FilterResult;
  fields: FieldExplanation[];
  /** the values of `$waitingSince` / `$waitingDays` / `$waitingHours` for each step the rule's `when` names */
  waiting?: WaitingExplanation[];
  /** absent when the rule has no `when` (every selected instance matches) */
  when?: ClauseExplanation;
  /** selected (or not ruled out) and `when` holds */
  matched: boolean;
  changes: PlannedChange[];
  /** actions that do not apply to this instance (not running, step not active) */
  skipped: string[];
  /** the rule's aliases its changes show (`fields.<alias>`), with their ids: views name those fields */
  aliases?: Record<string, FieldRef>;
  reports: ReportExplanation[];
  /** why the rule never matches this instance (its exclude, or the opt-out tag), when it does not */
  excluded?: string;
  /** why the rule does not run now (outside its active window) */
  inactive?: string;
  /** an evaluation error (the plan would report it for this instance) */
  error?: string;
}

export interface InstanceSummary {
  id: number;
  name: string;
  status: string;
  process_id: number;
  active_step_ids: number[];
  tags: string[];
}

export interface Explanation {
  now: string;
  base_url?: string;
  /** the profile of flowrules.config.yaml that chose base_url, when one did */
  profile?: string;
  instance: InstanceSummary;
  /**
   * What the service calls the instance's workflow and the steps and fields shown (from its process_snapshot), as a
   * plan's `names` holds them; absent when the snapshot names none
   */
  names?: WorkflowNames[];
  rules: RuleExplanation[];
  /** loaded rules of other workflows, named so an empty result is not a mystery */
  other_rules: Array<{ rule: string; workflow: string }>;
}
