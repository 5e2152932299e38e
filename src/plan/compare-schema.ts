/**
 * The keys `plan --compare` adds to a plan (docs/design.md, "The JSON plan"; docs/ci.md, "Reading the impact"): one
 * zod schema, from which the impact types are inferred, so the engine that builds them and `show`, which reads them
 * back from a plan file, cannot drift apart. Keys may be added, never renamed.
 */
import { z } from "zod";
import { ChangeSchema, RuleSummarySchema } from "./schema.js";

/** A change both versions of a rule plan, writing other values: `before` the ref's version's inputs, `after` the working tree's. */
export const ChangedWriteSchema = z.object({
  instance_id: z.number().int().nonnegative(),
  instance_name: z.string(),
  kind: z.string().min(1),
  step_id: z.number().int().nonnegative().optional(),
  before: z.record(z.string(), z.unknown()),
  after: z.record(z.string(), z.unknown()),
});

export const RuleImpactSchema = z.object({
  rule: z.string().min(1),
  status: z.enum(["added", "edited", "removed"]),
  /** changes the working tree's version plans and the ref's does not (instances newly affected, or a new kind of change) */
  added: z.array(ChangeSchema),
  /** changes the ref's version planned and the working tree's no longer does */
  removed: z.array(ChangeSchema),
  changed: z.array(ChangedWriteSchema),
  /**
   * changes the ref's version plans this run that the working tree's version defers to later runs by its rollout limit
   * (`limits.max_changes_per_run`): still wanted, only later, so not counted in `removed`; present when any
   */
  deferred: z.array(ChangeSchema).optional(),
  /**
   * changes the ref's version deferred by its rollout limit that the working tree's version plans this run: wanted by
   * both, now this run, so not counted in `added`; present when any
   */
  no_longer_deferred: z.array(ChangeSchema).optional(),
  /**
   * `plan --compare REF --forecast DURATION` (docs/forecast.md): what time alone does to the working tree's version
   * within the horizon, if nobody changes anything; present for added and edited rules whose plan it changes
   */
  forecast: z
    .object({
      horizon: z.string(),
      until: z.string(),
      added: z.number().int().nonnegative(),
      removed: z.number().int().nonnegative(),
      first_at: z.string().optional(),
    })
    .optional(),
});

export const CompareKeysSchema = z.object({
  compare: z.object({
    ref: z.string().min(1),
    commit: z.string().min(1),
    /** rules defined the same in both, not planned for themselves */
    unchanged: z.number().int().nonnegative(),
    /** the touched rules' versions at the ref as they were planned (their changes are in `impact[].removed`) */
    rules_at_ref: z.array(RuleSummarySchema),
  }),
  impact: z.array(RuleImpactSchema),
});

export type ChangedWrite = z.infer<typeof ChangedWriteSchema>;
export type RuleImpact = z.infer<typeof RuleImpactSchema>;
export type ImpactStatus = RuleImpact["status"];
export type CompareKeys = z.infer<typeof CompareKeysSchema>;
