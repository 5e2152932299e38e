/**
 * The shape of a rule file, written once: the zod definitions below. From them come the rule's TypeScript type
 * (`RuleInput`, what the compiler reads once the schema passed a key) and the JSON Schema (draft 2020-12) that the
 * validators are compiled from ahead of time (write-validators.ts) and `write-schema` writes to
 * schemas/rules.schema.json for editors; each action kind's fragment (src/actions) is put in as the kind wrote it.
 */
import { z } from "zod";
import { ACTIONS, actionAlternatives } from "../actions/index.js";
import type { JsonSchema } from "../actions/schema-types.js";
import { DATE_TIME_PARAMS } from "./datetime.js";
import { DATE_TIME_FORMAT, RUNTIME_FORMAT } from "./schema-formats.js";

export const SCHEMA_ID = "https://flowrules.dev/schemas/rules.schema.json";

export const INSTANCE_STATUSES = ["running", "completed", "aborted"] as const;

const DATE_TIME_LABELS: Record<string, string> = {
  started_time: "started",
  last_updated_time: "last updated",
  deadline: "whose deadline is",
  step_deadline: "with a step deadline",
  aborted_time: "aborted",
  completed_time: "completed",
  ended_time: "ended (completed or aborted)",
};

const positive = (): z.ZodInt => z.int().min(1);

/** A step or form field: its id, or its name as the workflow shows it (resolved at plan time, docs/workflows.md). */
const idOrName = (description: string) => z.union([positive(), z.string().min(1)]).describe(description);

function dateTimeParam(name: string) {
  const m = /^(.*)_(after|before)$/.exec(name);
  const what = DATE_TIME_LABELS[m?.[1] ?? ""] ?? m?.[1] ?? name;
  return z.string().meta({
    format: DATE_TIME_FORMAT,
    description:
      `Instances ${what} ${m?.[2] ?? ""} this instant: an ISO 8601 date-time (2024-05-01T00:00:00Z), \`now\`, or a ` +
      "signed ISO 8601 duration relative to the plan's start (-P30D, -PT6H, +P1W).",
  });
}

const statusValue = z.enum(INSTANCE_STATUSES).describe("An instance status: running, completed or aborted.");

const runtime = (bound: "min" | "max") =>
  z.string().meta({
    format: RUNTIME_FORMAT,
    description:
      `${bound === "min" ? "Minimum" : "Maximum"} total runtime, in the service's duration formats: ` +
      "`MM:SS` (00:50), `DD HH:MM` (01 09:30), `HH:MM:SS` (02:30:00) or ISO 8601 (PT50M, P1DT2H).",
  });

const progress = (bound: "min" | "max") =>
  z.int().min(0).max(100).describe(`${bound === "min" ? "Minimum" : "Maximum"} progress of the instance, in percent (0 to 100).`);

/** The query parameters of the v2 instance list, verbatim, minus paging and ordering (the engine owns those). */
const SelectShape = z
  .strictObject({
    status: z
      .union([statusValue, z.array(statusValue).min(1).meta({ uniqueItems: true })])
      .describe("Instance status: one of running, completed, aborted, or a list of them.")
      .optional(),
    priority: z.enum(["H", "V"]).describe("Priority: H (High) or V (Very high). Instances of Regular priority have none.").optional(),
    name: z.string().describe("Instance name filter (as the service matches it).").optional(),
    query: z.string().describe("Free-text search over the instances.").optional(),
    tags: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .describe("Tags: a tag or a list of tags (sent comma-separated).")
      .optional(),
    organization: positive().describe("Organization id.").optional(),
    process: positive().describe("Workflow id filter. Rarely useful: the rule's `workflow` is already part of the request path.").optional(),
    lead_user: positive().describe("User id of the workflow lead.").optional(),
    active_step_id: idOrName("Only instances in which this step is active: the step's id, or its name (resolved at plan time).").optional(),
    progress_min: progress("min").optional(),
    progress_max: progress("max").optional(),
    total_runtime_min: runtime("min").optional(),
    total_runtime_max: runtime("max").optional(),
    ...Object.fromEntries(DATE_TIME_PARAMS.map((p) => [p, dateTimeParam(p).optional()])),
  })
  .describe(
    "Server-side filters: query parameters of GET /v2/processes/{id}/instances/ (see docs/service.md), verbatim. Paging " +
      "(cursor, page_size) and ordering are the engine's.",
  );

const FieldShape = z
  .strictObject({
    step: idOrName("The step holding the field: its id, or its name (e.g. \"Manager approval\")."),
    action: idOrName("The form field: its id (action_id), or its name within the step (e.g. \"Amount\")."),
  })
  .describe("A form field: the step it belongs to and its id (action id).");

/** One `actions:` entry: its shape is the kind's own fragment (src/actions), put in where the JSON Schema is built. */
const ActionShape = z.unknown();

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

export const RuleShape = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/)
      .describe("Unique name of the rule across all loaded files (letters, digits, - _ .), used by --rule."),
    description: z.string().describe("What the rule does and why; shown in plans.").optional(),
    workflow: z
      .union([
        positive().describe("Workflow (process) id."),
        z
          .strictObject({ name: z.string().min(1).describe("Exact name of the workflow.") })
          .describe("A workflow by name, resolved via GET /processes/ at plan time."),
        z
          .array(
            z.union([
              positive().describe("Workflow (process) id."),
              z.strictObject({ name: z.string().min(1).describe("Exact name of the workflow.") }).describe("A workflow by name."),
            ]),
          )
          .min(1)
          .describe("Several workflows (ids or { name }): the rule is planned in each; steps and fields are named by name."),
        z.literal("*").describe("Every workflow the API key sees, resolved per run and named in the plan."),
      ])
      .describe(
        'The workflow: an id (1042), { name: Expense claim } resolved via GET /processes/, a list of them, or "*" for ' +
          "every workflow the key sees. A rule over several workflows names steps and fields by name, resolved per workflow.",
      ),
    fields: z
      .record(z.string(), FieldShape)
      .describe(
        "Aliases for form fields, read as fields.<alias> in `when`, templates and reports. An alias is an " +
          "identifier (letters, digits, _; not starting with a digit).",
      )
      .optional(),
    select: SelectShape.optional().describe("Server-side filters: query parameters of the v2 instance list (see docs/service.md), verbatim."),
    when: z
      .string()
      .min(1)
      .describe(
        "JSONata condition evaluated per instance over { instance, fields, snapshot, tags, now } with " +
          "$daysSince(ts), $hoursUntil(ts) and $waitingSince(step?), $waitingDays(step?), $waitingHours(step?) (how long a step has waited). Without it every selected instance matches.",
      )
      .optional(),
    actions: z.array(ActionShape).min(1).describe("What to do with each matched instance."),
    mode: z
      .enum(["enforce", "audit"])
      .describe(
        "enforce (default): apply sends the rule's changes. audit: they are planned and shown, marked \"audit\": true, " +
          "and apply never sends them. Roll a new rule out in audit, watch its plans, then switch to enforce.",
      )
      .optional(),
    exclude: z
      .strictObject({
        instance_ids: z.array(positive()).describe("Instance ids never matched by this rule, e.g. [81234, 81240].").optional(),
        tags: z
          .array(z.string().min(1))
          .describe("An instance carrying any of these tags is never matched by this rule, e.g. [vip, legal-hold].")
          .optional(),
      })
      .describe(
        "Instances this rule never matches, counted as `excluded` in the plan. Across all rules, an instance " +
          "carrying the opt-out tag (--opt-out-tag, default no-automation) is excluded too.",
      )
      .optional(),
    active: z
      .strictObject({
        from: z.string().describe("ISO 8601 date or date-time the window opens (2026-01-15 or 2026-01-15T08:00:00Z).").optional(),
        until: z.string().describe("ISO 8601 date or date-time the window closes (after `from`).").optional(),
        days: z.array(z.enum(DAYS)).min(1).describe("Weekdays the rule runs on, e.g. [mon, tue, wed, thu, fri].").optional(),
        hours: z
          .string()
          .describe("Local time range HH:MM-HH:MM, end exclusive, e.g. \"08:00-18:00\" (\"22:00-06:00\" wraps past midnight).")
          .optional(),
        timezone: z.string().min(1).describe("IANA time zone of days and hours, e.g. Europe/Berlin (default UTC).").optional(),
      })
      .describe(
        "When the rule runs. Outside its window it plans nothing and sends no request; its status is `inactive`, " +
          "with the reason and when it next becomes active. All keys are optional; days and hours are local to `timezone`.",
      )
      .optional(),
    limits: z
      .strictObject({
        max_instances: positive().describe("The plan fails for this rule when more instances match (its changes are left out).").optional(),
        max_changes_per_run: positive()
          .describe(
            "Gradual rollout: at most this many changes of the rule per plan (and per watch cycle), the oldest instances " +
              "(started_time, then id) first; the rest are shown as deferred by the rollout limit and left to later runs.",
          )
          .optional(),
      })
      .describe("Blast-radius guards.")
      .optional(),
  })
  .describe("One rule: which instances (workflow, select, when) and what to do with them (actions).");

/** A rule as written, once the schema passed it: what the compiler reads (key by key, see src/rules/compile.ts). */
export type RuleInput = z.input<typeof RuleShape>;

const RuleFileShape = z
  .strictObject({
    version: z.literal(1).describe("Version of the rule file format. Always 1."),
    rules: z.array(RuleShape).describe("The rules of this file."),
  })
  .describe("YAML rules for flowrules: `version: 1` and a list of `rules`.");

/** Where each shape stands in the JSON Schema: its own entry of `$defs`, referred to from where it is used. */
const DEFS = new Map<unknown, string>([
  [RuleShape, "rule"],
  [FieldShape, "field"],
  [SelectShape, "select"],
  [ActionShape, "action"],
]);

/**
 * One shape as JSON Schema. What zod adds that the rule file does not mean is left out: the safe-integer bounds of
 * every integer, `propertyNames` of a map whose keys are any string, the `type` beside a `const`.
 */
function jsonSchemaOf(shape: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(shape, {
    override: ({ zodSchema, jsonSchema, path }) => {
      const s = jsonSchema as JsonSchema;
      const def = DEFS.get(zodSchema);
      if (def !== undefined && path.length > 0) {
        for (const k of Object.keys(s)) delete s[k];
        s.$ref = `#/$defs/${def}`;
        return;
      }
      if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
      if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
      if (s.propertyNames !== undefined && JSON.stringify(s.propertyNames) === '{"type":"string"}') delete s.propertyNames;
      if ("const" in s) delete s.type;
    },
  }) as JsonSchema;
  delete out.$schema;
  return out;
}

function actionSchema(): JsonSchema {
  return {
    description: `One action: ${ACTIONS.map((m) => m.kind).join(", ")}.`,
    anyOf: actionAlternatives().map((a) => ({ $ref: `#/$defs/${a.name}` })),
  };
}

export function buildRulesSchema(): JsonSchema {
  const defs: Record<string, JsonSchema> = {
    rule: jsonSchemaOf(RuleShape),
    field: jsonSchemaOf(FieldShape),
    select: jsonSchemaOf(SelectShape),
    action: actionSchema(),
  };
  for (const a of actionAlternatives()) defs[a.name] = a.schema;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: SCHEMA_ID,
    title: "flowrules rule file",
    ...jsonSchemaOf(RuleFileShape),
    $defs: defs,
  };
}
