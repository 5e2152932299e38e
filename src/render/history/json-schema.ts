/**
 * The shape of `flowrules history --format json` (one JSON document on stdout): the changes of a watcher's last
 * cycles, as their journals record them. The TypeScript type is inferred from here and `npm run schema` writes
 * schemas/history.schema.json from it. Only src/render/write-schemas.ts loads this at run time: the views import the
 * types alone.
 */
import { z } from "zod";

export const HISTORY_SCHEMA_ID = "https://flowrules.dev/schemas/history.schema.json";

export const HistoryOutcome = z
  .enum(["applied", "stale", "failed", "not_acted", "not_sent", "in_flight", "not_started"])
  .describe(
    "applied: took effect (the journal's done line); stale: no longer held when its turn came; failed: refused or not decided; not_acted: a batch (a bulk abort) did not return it; not_sent: the watcher was stopped before sending it (the next cycle plans it again); in_flight: sent or about to be when the watcher was killed (the next watcher decides it by reading); not_started: the watcher was killed before it",
  );

export const HistoryChange = z
  .object({
    at: z.string().nullable().describe("when its outcome was journalled (ISO 8601); null when it has none"),
    rule: z.string(),
    instance_id: z.number().int().nonnegative(),
    instance_name: z.string().optional().describe("as the plan showed it"),
    kind: z.string().describe("the action kind: complete_step, save_step or abort"),
    step_id: z.number().int().nonnegative().optional().describe("the step, for step kinds"),
    outcome: HistoryOutcome,
    reason: z.string().optional().describe("why (stale, failed, not_acted), or what confirmed it (applied by reading)"),
  })
  .strict();

export const HistoryCycle = z
  .object({
    folder: z
      .string()
      .nullable()
      .describe(
        "the cycle's folder under <state>/watch/cycles/; null for a cycle that applied nothing (it failed, held rules back, or planned no change)",
      ),
    started_at: z
      .string()
      .nullable()
      .describe(
        "when it started: its plan (from the watcher's cycle log), else its apply (the journal's first start line); null when it never did",
      ),
    cycle: z.number().int().optional().describe("its number in its watcher's run"),
    kind: z.string().optional().describe("why it ran: first, update, reload, retry, window, time"),
    result: z
      .enum(["ok", "partial", "failed"])
      .optional()
      .describe(
        "ok: everything planned applied; partial: rules held back by their own data, the others applied; failed",
      ),
    held: z
      .array(z.string())
      .optional()
      .describe("the rules it held back (over max_instances, a failing expression, …)"),
    errors: z.array(z.string()).optional().describe("its errors (at most 20, then a count)"),
    finished: z
      .boolean()
      .describe(
        "its latest run wrote a finish line (false: the watcher was killed while applying; the next one resumes it)",
      ),
    changes: z
      .array(HistoryChange)
      .describe("its changes in plan order (changes of rules in audit are never sent and not listed)"),
  })
  .strict();

export const HistoryDocument = z
  .object({
    format_version: z.literal(1).describe("bumped only on an incompatible change of this document"),
    command: z.literal("history"),
    state_dir: z.string(),
    cycles: z
      .array(HistoryCycle)
      .describe(
        "the last cycles, in time order, oldest first: those that applied something, failed or held rules back (with --rule / --instance: those that concern it, their changes narrowed to it)",
      ),
  })
  .strict();

export type HistoryDocument = z.infer<typeof HistoryDocument>;
export type HistoryCycleEntry = z.infer<typeof HistoryCycle>;
export type HistoryChangeEntry = z.infer<typeof HistoryChange>;
export type HistoryOutcome = z.infer<typeof HistoryOutcome>;

export function historyJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(HistoryDocument, { target: "draft-2020-12" });
  return { $schema, $id: HISTORY_SCHEMA_ID, title: "flowrules history --format json", ...rest };
}
