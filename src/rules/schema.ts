/**
 * The JSON Schema (draft 2020-12) of a rule file, assembled from the action modules' fragments. This object is what
 * the validators are compiled from (write-validators.ts) and what `write-schema` writes to schemas/rules.schema.json
 * for editors.
 */
import { ACTIONS, actionAlternatives } from "../actions/index.js";
import { idOrName, type JsonSchema } from "../actions/schema-types.js";
import { DATE_TIME_PARAMS } from "./datetime.js";
import { DATE_TIME_FORMAT, RUNTIME_FORMAT } from "./schema-formats.js";

export const SCHEMA_ID = "https://flowrules.dev/schemas/rules.schema.json";

/** Custom formats (schema-formats.ts checks them); editors ignore formats they do not know. */
export { DATE_TIME_FORMAT, RUNTIME_FORMAT };

/** `select` keys that the instance list takes but belong to the engine. */
export const ENGINE_OWNED_PARAMS = ["cursor", "page_size", "ordering"] as const;

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

function dateTimeParam(name: string): JsonSchema {
  const m = /^(.*)_(after|before)$/.exec(name);
  const what = DATE_TIME_LABELS[m?.[1] ?? ""] ?? m?.[1] ?? name;
  return {
    type: "string",
    format: DATE_TIME_FORMAT,
    description:
      `Instances ${what} ${m?.[2] ?? ""} this instant: an ISO 8601 date-time (2024-05-01T00:00:00Z), \`now\`, or a ` +
      "signed ISO 8601 duration relative to the plan's start (-P30D, -PT6H, +P1W).",
  };
}

const statusValue: JsonSchema = {
  type: "string",
  enum: [...INSTANCE_STATUSES],
  description: "An instance status: running, completed or aborted.",
};

const runtime = (bound: "min" | "max"): JsonSchema => ({
  type: "string",
  format: RUNTIME_FORMAT,
  description:
    `${bound === "min" ? "Minimum" : "Maximum"} total runtime, in the service's duration formats: ` +
    "`MM:SS` (00:50), `DD HH:MM` (01 09:30), `HH:MM:SS` (02:30:00) or ISO 8601 (PT50M, P1DT2H).",
});

const progress = (bound: "min" | "max"): JsonSchema => ({
  type: "integer",
  minimum: 0,
  maximum: 100,
  description: `${bound === "min" ? "Minimum" : "Maximum"} progress of the instance, in percent (0 to 100).`,
});

/** The query parameters of the v2 instance list, verbatim, minus paging and ordering (the engine owns those). */
export function selectSchema(): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    status: {
      description: "Instance status: one of running, completed, aborted, or a list of them.",
      anyOf: [statusValue, { type: "array", items: statusValue, minItems: 1, uniqueItems: true }],
    },
    priority: {
      type: "string",
      enum: ["H", "V"],
      description: "Priority: H (High) or V (Very high). Instances of Regular priority have none.",
    },
    name: { type: "string", description: "Instance name filter (as the service matches it)." },
    query: { type: "string", description: "Free-text search over the instances." },
    tags: {
      description: "Tags: a tag or a list of tags (sent comma-separated).",
      anyOf: [
        { type: "string", minLength: 1 },
        { type: "array", items: { type: "string", minLength: 1 }, minItems: 1 },
      ],
    },
    organization: { type: "integer", minimum: 1, description: "Organization id." },
    process: {
      type: "integer",
      minimum: 1,
      description: "Workflow id filter. Rarely useful: the rule's `workflow` is already part of the request path.",
    },
    lead_user: { type: "integer", minimum: 1, description: "User id of the workflow lead." },
    active_step_id: {
      description: "Only instances in which this step is active: the step's id, or its name (resolved at plan time).",
      anyOf: [
        { type: "integer", minimum: 1 },
        { type: "string", minLength: 1 },
      ],
    },
    progress_min: progress("min"),
    progress_max: progress("max"),
    total_runtime_min: runtime("min"),
    total_runtime_max: runtime("max"),
  };
  for (const p of DATE_TIME_PARAMS) properties[p] = dateTimeParam(p);
  return {
    type: "object",
    description:
      "Server-side filters: query parameters of GET /v2/processes/{id}/instances/ (see docs/service.md), verbatim. Paging " +
      "(cursor, page_size) and ordering are the engine's.",
    properties,
    additionalProperties: false,
  };
}

function actionSchema(): JsonSchema {
  return {
    description: `One action: ${ACTIONS.map((m) => m.kind).join(", ")}.`,
    anyOf: actionAlternatives().map((a) => ({ $ref: `#/$defs/${a.name}` })),
  };
}

function ruleSchema(): JsonSchema {
  return {
    type: "object",
    description: "One rule: which instances (workflow, select, when) and what to do with them (actions).",
    properties: {
      name: {
        type: "string",
        minLength: 1,
        pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description: "Unique name of the rule across all loaded files (letters, digits, - _ .), used by --rule.",
      },
      description: { type: "string", description: "What the rule does and why; shown in plans." },
      workflow: {
        description: "The workflow: an id (1042), or { name: Expense claim } resolved via GET /processes/.",
        anyOf: [
          { type: "integer", minimum: 1, description: "Workflow (process) id." },
          {
            type: "object",
            description: "A workflow by name, resolved via GET /processes/ at plan time.",
            properties: { name: { type: "string", minLength: 1, description: "Exact name of the workflow." } },
            required: ["name"],
            additionalProperties: false,
          },
        ],
      },
      fields: {
        type: "object",
        description:
          "Aliases for form fields, read as fields.<alias> in `when`, templates and reports. An alias is an " +
          "identifier (letters, digits, _; not starting with a digit).",
        additionalProperties: { $ref: "#/$defs/field" },
      },
      select: {
        $ref: "#/$defs/select",
        description: "Server-side filters: query parameters of the v2 instance list (see docs/service.md), verbatim.",
      },
      when: {
        type: "string",
        minLength: 1,
        description:
          "JSONata condition evaluated per instance over { instance, fields, snapshot, tags, now } with " +
          "$daysSince(ts) and $hoursUntil(ts). Without it every selected instance matches.",
      },
      actions: {
        type: "array",
        minItems: 1,
        description: "What to do with each matched instance.",
        items: { $ref: "#/$defs/action" },
      },
      mode: {
        type: "string",
        enum: ["enforce", "audit"],
        description:
          "enforce (default): apply sends the rule's changes. audit: they are planned and shown, marked \"audit\": true, " +
          "and apply never sends them. Roll a new rule out in audit, watch its plans, then switch to enforce.",
      },
      exclude: {
        type: "object",
        description:
          "Instances this rule never matches, counted as `excluded` in the plan. Across all rules, an instance " +
          "carrying the opt-out tag (--opt-out-tag, default no-automation) is excluded too.",
        properties: {
          instance_ids: {
            type: "array",
            items: { type: "integer", minimum: 1 },
            description: "Instance ids never matched by this rule, e.g. [81234, 81240].",
          },
          tags: {
            type: "array",
            items: { type: "string", minLength: 1 },
            description: "An instance carrying any of these tags is never matched by this rule, e.g. [vip, legal-hold].",
          },
        },
        additionalProperties: false,
      },
      active: {
        type: "object",
        description:
          "When the rule runs. Outside its window it plans nothing and sends no request; its status is `inactive`, " +
          "with the reason and when it next becomes active. All keys are optional; days and hours are local to `timezone`.",
        properties: {
          from: { type: "string", description: "ISO 8601 date or date-time the window opens (2026-01-15 or 2026-01-15T08:00:00Z)." },
          until: { type: "string", description: "ISO 8601 date or date-time the window closes (after `from`)." },
          days: {
            type: "array",
            minItems: 1,
            items: { type: "string", enum: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] },
            description: "Weekdays the rule runs on, e.g. [mon, tue, wed, thu, fri].",
          },
          hours: {
            type: "string",
            description: "Local time range HH:MM-HH:MM, end exclusive, e.g. \"08:00-18:00\" (\"22:00-06:00\" wraps past midnight).",
          },
          timezone: {
            type: "string",
            minLength: 1,
            description: "IANA time zone of days and hours, e.g. Europe/Berlin (default UTC).",
          },
        },
        additionalProperties: false,
      },
      limits: {
        type: "object",
        description: "Blast-radius guards.",
        properties: {
          max_instances: {
            type: "integer",
            minimum: 1,
            description: "The plan fails for this rule when more instances match (its changes are left out).",
          },
        },
        additionalProperties: false,
      },
    },
    required: ["name", "workflow", "actions"],
    additionalProperties: false,
  };
}

export function buildRulesSchema(): JsonSchema {
  const defs: Record<string, JsonSchema> = {
    rule: ruleSchema(),
    field: {
      type: "object",
      description: "A form field: the step it belongs to and its id (action id).",
      properties: {
        step: idOrName("The step holding the field: its id, or its name (e.g. \"Manager approval\")."),
        action: idOrName("The form field: its id (action_id), or its name within the step (e.g. \"Amount\")."),
      },
      required: ["step", "action"],
      additionalProperties: false,
    },
    select: selectSchema(),
    action: actionSchema(),
  };
  for (const a of actionAlternatives()) defs[a.name] = a.schema;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: SCHEMA_ID,
    title: "flowrules rule file",
    description: "YAML rules for flowrules: `version: 1` and a list of `rules`.",
    type: "object",
    properties: {
      version: { const: 1, description: "Version of the rule file format. Always 1." },
      rules: { type: "array", description: "The rules of this file.", items: { $ref: "#/$defs/rule" } },
    },
    required: ["version", "rules"],
    additionalProperties: false,
    $defs: defs,
  };
}
