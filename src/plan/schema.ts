/**
 * The plan file: one zod schema of its JSON form (format_version 1, described in docs/design.md), from which every
 * plan type is inferred. The planner builds these objects, every renderer reads them and `apply` parses files
 * against the same schema, so the three cannot drift apart. Keys may be added, never renamed. What a change of each
 * kind must look like inside (its request) is the action kind's to say: see `checkChange` in src/actions.
 */
import { z } from "zod";

export const SUPPORTED_FORMAT_VERSION = 1;

const isoDateTime = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: "expected an ISO 8601 date-time" });

export const RequestSchema = z.object({
  method: z.literal("POST"),
  /** relative to the base URL, e.g. /instances/123/complete_step/ or /instances/bulk/abort */
  path: z.string().min(1),
  body: z.unknown(),
});

/** What must still hold at apply time for the change to be sent. */
export const PreconditionSchema = z.object({
  status: z.literal("running"),
  /** for step kinds: the step must still be active */
  active_step_id: z.number().int().nonnegative().optional(),
  /** the instance's last_updated_time when planned, when known (a later value means it changed since) */
  last_updated_time: isoDateTime.optional(),
  /**
   * when the record was not read: the plan saw the instance last updated before this instant (it was not on the
   * plan's list of instances updated since then, taken before any of its data was read); a last_updated_time at or
   * after it means the instance changed since the plan saw it (src/engine/seen.ts)
   */
  last_updated_before: isoDateTime.optional(),
});

export const ChangeSchema = z.object({
  /** stable id of the change within the plan: `${rule}:${kind}:${instance_id}[:${step_id}]` */
  id: z.string().min(1),
  rule: z.string().min(1),
  instance_id: z.number().int().nonnegative(),
  instance_name: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  process_id: z.number().int().nonnegative(),
  /** a mutating action kind of src/actions; apply refuses a kind this version does not know */
  kind: z.string().min(1),
  step_id: z.number().int().nonnegative().optional(),
  request: RequestSchema,
  /** the values this change touches, before and after (keys: `status`, `step <id>`, `field <alias|action id>`) */
  before: z.record(z.string(), z.unknown()),
  after: z.record(z.string(), z.unknown()),
  precondition: PreconditionSchema,
  /** planned by a rule in `mode: audit`: shown, never sent by apply (covered by the digest like every key) */
  audit: z.boolean().optional(),
});

export const ReportGroupSchema = z.object({
  key: z.string(),
  count: z.number().int(),
  instance_ids: z.array(z.number().int()),
});

export const ReportSchema = z.object({
  rule: z.string(),
  title: z.string(),
  group_by: z.string(),
  columns: z.array(z.string()),
  groups: z.array(ReportGroupSchema),
  /** one row per matched instance, keyed by column */
  rows: z.array(z.record(z.string(), z.unknown())),
});

export const PlanErrorSchema = z.object({
  rule: z.string().optional(),
  instance_id: z.number().optional(),
  /** "limit" | "conflict" | "evaluation" | "resolve" | "api" */
  code: z.string(),
  message: z.string(),
});

export const RuleSummarySchema = z.object({
  name: z.string(),
  workflow_id: z.number().int().nullable(),
  workflow_name: z.string().optional(),
  /** instances returned by the server-side selection */
  selected: z.number().int(),
  /** instances for which `when` held */
  matched: z.number().int(),
  changes: z.number().int(),
  /** matched instances an action did not apply to (not running, step not active), shown rather than failed */
  skipped: z.number().int(),
  /**
   * `skipped` by reason, as the action kinds word it ("the step already holds these values": 6); present when some
   * were skipped (plans written before plans carried names have none)
   */
  skipped_by_reason: z.record(z.string(), z.number().int()).optional(),
  /**
   * The rule's field aliases its changes show (`fields.<alias>` keys of before/after), with the ids they stand for,
   * so views can name the field (`names`); absent when no change shows an alias.
   */
  fields: z.record(z.string(), z.object({ step: z.number().int(), action: z.number().int() })).optional(),
  /** selected instances left out by the rule's `exclude` or the opt-out tag (present when the rule has an `exclude`, or the opt-out tag left any out) */
  excluded: z.number().int().optional(),
  /** inactive: outside the rule's `active` window, not run (no request) */
  status: z.enum(["ok", "failed", "inactive"]),
  /** why the rule is inactive */
  reason: z.string().optional(),
  /** when an inactive rule next becomes active (absent when its window has ended) */
  next_active_at: isoDateTime.optional(),
  /**
   * changes left to later runs by the rule's rollout limit (`limits.max_changes_per_run`), the oldest instances going
   * first; present when some were deferred
   */
  deferred: z.number().int().optional(),
  /** the instances whose changes were deferred, by id */
  deferred_ids: z.array(z.number().int()).optional(),
  /** a rule over several workflows (a list, or "*"): the workflows it was planned in this run (`workflow_id` is null) */
  workflow_ids: z.array(z.number().int()).optional(),
  /** with `workflow: "*"`: the workflows whose steps or fields do not fit the rule's names, skipped, with why */
  workflows_skipped: z.array(z.object({ workflow_id: z.number().int(), reason: z.string() })).optional(),
  /** the rule's rollout limit, when it deferred changes */
  max_changes_per_run: z.number().int().optional(),
});

/**
 * Counts: one key per mutating kind (in registry order), then reports, errors, `skipped` (matched instances an action
 * did not apply to, when any; by reason in `rules[].skipped_by_reason`) and, live, requests.
 */
export const SummarySchema = z
  .object({
    reports: z.number().int(),
    errors: z.number().int(),
    skipped: z.number().int().optional(),
    requests: z.number().int().optional(),
  })
  .catchall(z.number().int());

/**
 * What the service calls a workflow, its steps and its form fields, by id, for the views (`complete step 20111
 * "Manager approval"`, `Amount (50230): 120 → 95`): only those the plan shows, from the live structure, the records'
 * process_snapshot or the workflow catalog. Names are data for people; the plan's identity stays its ids (requests,
 * conflicts and apply never read names). Absent in plans written before plans carried names, and for what no source named.
 */
export const WorkflowNamesSchema = z.object({
  workflow_id: z.number().int(),
  name: z.string().optional(),
  /** step id → name */
  steps: z.record(z.string(), z.string()).optional(),
  /** form-field (action) id → name */
  fields: z.record(z.string(), z.string()).optional(),
});

/** `plan --changed-since REF` (docs/ci.md): what the comparison with the ref found; added keys, absent otherwise. */
export const ChangedSinceSchema = z.object({
  ref: z.string(),
  commit: z.string(),
  added: z.array(z.string()),
  changed: z.array(z.string()),
  unchanged: z.array(z.string()),
});

/** A rule defined at the ref and no longer: nothing is planned for it, it is listed for the reviewer. */
export const RemovedRuleSchema = z.object({ name: z.string(), file: z.string() });

/**
 * What a revert plan (`flowrules revert`, docs/forecast.md) could not undo, for a person to act on: each with the
 * instance, and why (a kind the service cannot reverse, a field someone changed since, a step no longer active).
 */
export const RevertNoteSchema = z.object({
  rule: z.string(),
  instance_id: z.number().int(),
  instance_name: z.string().optional(),
  kind: z.string(),
  step_id: z.number().int().optional(),
  /** the field, for a field left alone (`action 50230`) */
  field: z.string().optional(),
  reason: z.string(),
});

export const RevertSchema = z.object({
  /** the plan file whose applied changes this plan reverts */
  source: z.string(),
  /** the source plan's digest */
  source_digest: z.string(),
  /** applied changes the service has no way to undo (completed steps, aborted instances) */
  not_reversible: z.array(RevertNoteSchema),
  /** fields not set back: changed since by someone else, empty before where no empty value is taken, step no longer active */
  left: z.array(RevertNoteSchema),
});

export const PlanSchema = z.object({
  format_version: z.literal(SUPPORTED_FORMAT_VERSION),
  flowrules_version: z.string(),
  created_at: isoDateTime,
  /**
   * a forecast (`plan --at`, docs/forecast.md): the instant the plan was made for, with data as read at created_at;
   * apply refuses such a plan
   */
  forecast_at: isoDateTime.optional(),
  /**
   * a partial plan (`plan --max-duration … --partial`, docs/operating.md "A partial plan"): the time ran out before
   * the sync was complete, so its changes and reports cover only what was read; apply refuses such a plan
   */
  partial: z
    .object({
      /** instances of the workflows being synced whose records the state holds, and the service's count of them */
      synced: z.number().int().min(0).nullable(),
      total: z.number().int().min(0).nullable(),
      /** per workflow being synced: instances read and counted */
      workflows: z.array(
        z.object({
          workflow_id: z.number().int(),
          synced: z.number().int().min(0),
          total: z.number().int().min(0).nullable(),
        }),
      ),
      /** the rules the deadline cut that the state could not plan: none of their changes or reports are in the plan */
      rules_cut: z.array(z.string()),
      /**
       * the rules the deadline cut that were planned from what the state holds over part of their selection: their
       * changes and reports are those of `selected` instances, of the `total` their selection counts (the service's
       * count, or the elements of a wider listing held whole that pass its filters; null: not known);
       * a cut rule named in neither list was planned from the state over all of its selection
       */
      rules_partial: z
        .array(
          z.object({
            rule: z.string(),
            selected: z.number().int().min(0),
            total: z.number().int().min(0).nullable(),
          }),
        )
        .optional(),
      /** why each rule of `rules_cut` was not planned from the state, in words; absent when none was tried */
      cut_reasons: z.array(z.object({ rule: z.string(), reason: z.string() })).optional(),
    })
    .optional(),
  base_url: z.string().min(1),
  /** the profile of flowrules.config.yaml that chose base_url (docs/operating.md, Profiles); absent without one */
  profile: z.string().min(1).optional(),
  rules_digest: z.string(),
  rules: z.array(RuleSummarySchema),
  changes: z.array(ChangeSchema),
  reports: z.array(ReportSchema),
  errors: z.array(PlanErrorSchema),
  summary: SummarySchema,
  /** names of the workflows, steps and fields the plan shows, one entry per workflow (WorkflowNamesSchema) */
  names: z.array(WorkflowNamesSchema).optional(),
  changed_since: ChangedSinceSchema.optional(),
  removed_rules: z.array(RemovedRuleSchema).optional(),
  /** present in a revert plan (`flowrules revert`): where it comes from and what it could not undo */
  revert: RevertSchema.optional(),
});

export const DigestSchema = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, { message: 'expected "sha256:" and 64 hex digits' });

export const SignedPlanSchema = PlanSchema.extend({ digest: DigestSchema });

export type PlannedRequest = z.infer<typeof RequestSchema>;
export type Precondition = z.infer<typeof PreconditionSchema>;
/** A change as planned and as read back from a plan file (the same shape). */
export type PlannedChange = z.infer<typeof ChangeSchema>;
export type ReportGroup = z.infer<typeof ReportGroupSchema>;
export type PlannedReport = z.infer<typeof ReportSchema>;
export type PlanError = z.infer<typeof PlanErrorSchema>;
export type RulePlanSummary = z.infer<typeof RuleSummarySchema>;
export type PlanSummary = z.infer<typeof SummarySchema>;
export type ChangedSinceNote = z.infer<typeof ChangedSinceSchema>;
export type RemovedRule = z.infer<typeof RemovedRuleSchema>;
export type WorkflowNames = z.infer<typeof WorkflowNamesSchema>;
export type Plan = z.infer<typeof PlanSchema>;
export type RevertNote = z.infer<typeof RevertNoteSchema>;
export type SignedPlan = Plan & { digest: string };
export type PlanFile = z.infer<typeof SignedPlanSchema>;
