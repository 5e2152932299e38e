/** abort: stop every matched running instance; planned per instance, sent in bulk batches at apply. */
import type { JsonSchema } from "./schema-types.js";

export const kind = "abort" as const;

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
