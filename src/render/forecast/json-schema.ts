/**
 * The shape of `flowrules forecast --format json` (docs/forecast.md): per rule, what its plan holds at each point of
 * the horizon and what time alone added or took away, cumulatively (since the first point, now) and per step (since
 * the point before). The TypeScript type is inferred from here and `npm run schema` writes
 * schemas/forecast.schema.json from it. Only src/render/write-schemas.ts loads this at run time: the views import the
 * types alone.
 */
import { z } from "zod";

export const FORECAST_SCHEMA_ID = "https://flowrules.dev/schemas/forecast.schema.json";

const Counts = z
  .record(z.string(), z.number().int().nonnegative())
  .describe("a count per action kind (complete_step, save_step, abort); kinds with none are left out");

export const ForecastRulePoint = z
  .object({
    at: z.string().describe("the instant (ISO 8601, UTC)"),
    changes: z.number().int().nonnegative().describe("the changes the rule's plan holds at this instant"),
    by_kind: Counts,
    matched: z.number().int().nonnegative().describe("instances the rule matched at this instant (reports included)"),
    added: z
      .number()
      .int()
      .nonnegative()
      .describe("changes at this instant that the first point's plan does not hold (cumulative)"),
    removed: z
      .number()
      .int()
      .nonnegative()
      .describe("changes of the first point's plan no longer planned at this instant (cumulative)"),
    added_by_kind: Counts,
    step_added: z.number().int().nonnegative().describe("changes new since the point before"),
    step_removed: z.number().int().nonnegative().describe("changes of the point before no longer planned"),
    step_added_by_kind: Counts,
    instance_ids_added: z
      .array(z.number().int().nonnegative())
      .describe("instances whose change is new since the point before"),
    instance_ids_removed: z
      .array(z.number().int().nonnegative())
      .describe("instances whose change of the point before is no longer planned"),
    status: z
      .string()
      .optional()
      .describe("the rule's status at this instant when it is not active (inactive, failed)"),
  })
  .strict();

export const ForecastRule = z
  .object({
    rule: z.string(),
    workflow_id: z.number().int().nullable(),
    points: z.array(ForecastRulePoint).describe("one per point of the forecast, in time order"),
  })
  .strict();

export const ForecastDocument = z
  .object({
    format_version: z.literal(1).describe("bumped only on an incompatible change of this document"),
    command: z.literal("forecast"),
    created_at: z.string().describe("when the data was read (ISO 8601): every point shows it as it was then"),
    base_url: z.string(),
    from: z.string().describe("the first point: now"),
    until: z.string().describe("the last point"),
    every: z.string().describe("the step between points (1d, 12h)"),
    points: z.array(z.string()).describe("the instants, in time order"),
    requests: z.number().int().nonnegative().describe("requests the whole forecast made"),
    rules: z.array(ForecastRule),
    errors: z
      .array(z.object({ at: z.string(), rule: z.string(), message: z.string() }).strict())
      .describe("planning errors, each at the first point it occurred"),
  })
  .strict();

export type ForecastDocument = z.infer<typeof ForecastDocument>;
export type ForecastRuleEntry = z.infer<typeof ForecastRule>;
export type ForecastRulePointEntry = z.infer<typeof ForecastRulePoint>;

export function forecastJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(ForecastDocument, { target: "draft-2020-12" });
  return { $schema, $id: FORECAST_SCHEMA_ID, title: "flowrules forecast --format json", ...rest };
}
