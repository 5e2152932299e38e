/** abort: stop every matched running instance; planned per instance, sent in bulk batches at apply. */
import type { JsonSchema } from "./schema-types.js";
import type { ActionOutcome, ActionPlanInput, KindPresentation } from "./types.js";
import type { CompiledAction } from "../rules/types.js";

export const kind = "abort" as const;

/** The spec's bulk-stop path: no trailing slash (spec 4.5). */
export const BULK_ABORT_PATH = "/instances/bulk/abort";

const description =
  "Stop (abort) every matched running instance. Planned per instance; sent in batches to POST /instances/bulk/abort.";

/** Written as the bare string `abort`, or as `{ abort: {} }`. */
export const schema: JsonSchema = {
  anyOf: [
    { const: "abort", description },
    {
      type: "object",
      description,
      properties: { abort: { type: "object", description, properties: {}, additionalProperties: false } },
      required: ["abort"],
      additionalProperties: false,
    },
  ],
};

export const presentation: KindPresentation = {
  symbol: "✗",
  legend: "abort the instance",
  summary: (n) => `${n} ${n === 1 ? "instance" : "instances"} to abort`,
  colour: "red",
};

export function plan(input: ActionPlanInput<Extract<CompiledAction, { kind: "abort" }>>): Promise<ActionOutcome> {
  const { rule, data } = input;
  if (data.status !== "running") return Promise.resolve({ skipped: `instance is ${data.status}` });
  return Promise.resolve({
    change: {
      id: `${rule.name}:abort:${data.id}`,
      rule: rule.name,
      instance_id: data.id,
      instance_name: data.name,
      process_id: data.process_id,
      kind: "abort",
      request: { method: "POST", path: BULK_ABORT_PATH, body: { ids: [data.id] } },
      before: { status: "running" },
      after: { status: "aborted" },
      precondition: {
        status: "running",
        ...(data.record?.last_updated_time ? { last_updated_time: data.record.last_updated_time } : {}),
      },
    },
  });
}
