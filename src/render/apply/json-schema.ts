/**
 * The shape of `flowrules apply --format json` (one JSON document on stdout). The TypeScript type is inferred from
 * here and `npm run schema` writes schemas/apply-result.schema.json from it, so the output, its type and its
 * published schema cannot drift apart. Only src/render/write-schemas.ts loads this at run time: the renderer imports
 * the type alone, so an apply does not build schemas (docs/performance.md, "Memory").
 */
import { z } from "zod";

export const APPLY_RESULT_SCHEMA_ID = "https://flowrules.dev/schemas/apply-result.schema.json";

const count = z.number().int().nonnegative();

export const ApplyChangeStatus = z
  .enum(["applied", "already_done", "stale", "failed", "not_acted", "not_started", "deferred", "skipped"])
  .describe(
    "applied: took effect in this run; already_done: an earlier run of this plan applied it; stale: the plan no longer holds for it; failed: refused by the service or not decided; not_acted: its batch (a bulk abort) did not return its id; not_started: interrupted before it; deferred: --max-duration ran out or a signal stopped the run first (the same apply again resumes it); skipped: its rule is in audit mode, never sent",
  );

export const ApplyResultChange = z
  .object({
    id: z.string().describe("the change's id in the plan: <rule>:<kind>:<instance_id>[:<step_id>]"),
    rule: z.string().describe("the rule that planned it"),
    instance_id: count.describe("the instance it acts on"),
    kind: z.string().describe("the action kind: complete_step, save_step or abort"),
    step_id: count.optional().describe("the step, for step kinds"),
    status: ApplyChangeStatus,
    reason: z
      .string()
      .optional()
      .describe("why (stale, failed, not_acted, not_started, skipped), or what confirmed it (applied by reading)"),
    how: z
      .enum(["response", "returned", "verified"])
      .optional()
      .describe("how an applied change was known to take effect"),
  })
  .strict()
  .describe("one planned change and what happened to it");

export const ApplyResult = z
  .object({
    format_version: z.literal(1).describe("bumped only on an incompatible change of this document"),
    command: z.literal("apply"),
    status: z
      .enum(["complete", "incomplete", "stopped_at_time_limit", "stopped", "nothing_to_apply", "not_applied"])
      .describe(
        "complete: every change applied or done earlier; incomplete: some stale, failed, not acted on or not started (exit 1); stopped_at_time_limit: --max-duration deferred some; stopped: a signal (SIGTERM, SIGINT) stopped the run, the changes not started are deferred; nothing_to_apply: the rules planned no change to send; not_applied: the run stopped before any change (exit 1), see error",
      ),
    base_url: z.string().describe("the service the changes were sent to"),
    error: z.string().optional().describe("with not_applied: why, as the line on stderr says it"),
    plan_file: z
      .string()
      .nullable()
      .describe(
        "the applied plan (with rule paths, the one saved under .flowrules/runs/); null when nothing was applied",
      ),
    journal_file: z.string().nullable().describe("the journal of this plan's runs; null when nothing was applied"),
    summary: z
      .object({
        planned: count.describe("changes in the plan that are sent (audit ones excluded)"),
        applied: count,
        already_done: count,
        stale: count,
        failed: count,
        not_acted: count,
        not_started: count,
        deferred: count,
        skipped: count.describe("changes of rules in audit mode, never sent"),
        not_aborted: count.describe(
          'deprecated: the same as not_acted, its name before batches were generic (README.md, "Compatibility notes")',
        ),
      })
      .strict()
      .describe("how many changes ended in each status"),
    requests: z
      .object({
        total: count.describe("HTTP requests sent, retries included"),
        get: count,
        post: count,
        retries: count,
        rate_limited: count.describe("answers 429"),
        outcome_unknown: count.describe("POSTs whose outcome was decided by reading"),
      })
      .strict()
      .describe("requests sent while applying (with rule paths, the planning requests are counted apart, on stderr)"),
    staleness: z
      .object({
        listed_as_changed: count.describe("planned instances listed as changed since the plan"),
        read_to_check: count.describe("instances read to judge staleness"),
        checks: count.describe("staleness checks made during the run"),
      })
      .strict(),
    changes: z.array(ApplyResultChange).describe("every change of the plan in plan order, audit ones last"),
  })
  .strict()
  .describe("the result of flowrules apply --format json");

export type ApplyResultDocument = z.infer<typeof ApplyResult>;
export type ApplyResultChangeEntry = z.infer<typeof ApplyResultChange>;

export function applyResultJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(ApplyResult, { target: "draft-2020-12" });
  return { $schema, $id: APPLY_RESULT_SCHEMA_ID, title: "flowrules apply --format json", ...rest };
}
