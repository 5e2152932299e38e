/**
 * The rule-test file format, defined once in zod: the runtime parse (typed data) and the published JSON Schema
 * (`schemas/rules-test.schema.json`, for editors via `# yaml-language-server: $schema=`) both come from here, so they
 * cannot drift. Every key carries a description (editor hover text).
 */
import { MUTATING_KINDS } from "../actions/index.js";
import { z } from "zod";
import { DATE_TIME_FORMAT } from "../rules/schema-formats.js";

export const TEST_SCHEMA_ID = "https://flowrules.dev/schemas/rules-test.schema.json";

const Id = z.number().int().min(1);

const DateTime = z
  .string()
  .meta({ format: DATE_TIME_FORMAT })
  .describe("An ISO 8601 date-time, `now`, or a signed ISO 8601 duration relative to the test's `now` (-P3D, -PT6H).");

const FieldType = z
  .enum(["text", "number", "date", "radio", "checklist"])
  .describe("Form-field type: decides the input object a plain value becomes (radio → radioItemSelected, ...).");

export const FixtureSchema = z
  .strictObject({
    id: Id.describe("Instance id (referenced by the expectations)."),
    name: z.string().optional().describe('Instance name; default "Instance <id>".'),
    workflow: z
      .union([Id, z.string().min(1)])
      .optional()
      .describe("Workflow id (or name) the instance belongs to; default: the workflow of the rule under test."),
    status: z
      .enum(["running", "completed", "aborted"])
      .optional()
      .describe("Default: from completed_time / aborted_time, else running."),
    tags: z.array(z.string()).optional().describe("Tags of the instance."),
    priority: z
      .enum(["H", "V", "Regular"])
      .nullable()
      .optional()
      .describe("H (High), V (Very high), or Regular / empty for none."),
    stage: z.string().optional().describe("Stage of the instance."),
    deadline: DateTime.optional().describe("Instance deadline (ISO, `now` or relative to `now`)."),
    started_time: DateTime.optional().describe("When the instance started (ISO, `now` or relative to `now`)."),
    last_updated_time: DateTime.optional().describe("Last update (ISO, `now` or relative to `now`)."),
    completed_time: DateTime.optional().describe("Completion time; implies status completed."),
    aborted_time: DateTime.optional().describe("Abort time; implies status aborted."),
    active_step: Id.optional().describe("The one active step (shorthand for active_step_ids: [id])."),
    active_step_ids: z.array(Id).optional().describe("Active steps. Default: none, so write the step a rule acts on."),
    step_deadlines: z
      .record(z.string().regex(/^\d+$/), DateTime)
      .optional()
      .describe("Deadlines of steps: step id → date-time (checked by step_deadline_* filters on active steps)."),
    progress: z
      .number()
      .int()
      .min(0)
      .max(100)
      .optional()
      .describe("Progress in percent, for progress_min / progress_max."),
    visibility_mode: z
      .enum(["public", "involved", "involved_plus", "restrictive"])
      .optional()
      .describe("Visibility mode of the instance."),
    fields: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.unknown())
      .optional()
      .describe(
        'Form-field values by the alias the rule declares in `fields`: plain (42.5, "EUR", [Laptop, Badge], ' +
          "an ISO date) or an input object ({ inputValue: ... }, { date: ... }). null = no value.",
      ),
    fields_by_workflow: z
      .record(
        z.string().min(1),
        z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.unknown()).describe("Alias → value, as in `fields`."),
      )
      .optional()
      .describe(
        "Form-field values per workflow: workflow id (or a name of `workflows`) → alias → value, each alias as the rules " +
          "of that workflow declare it. A case takes the values of the workflow the fixture is in (over `fields`); a " +
          "shared fixture with no values for a case's workflow is left out of it. A rule over several workflows sees the " +
          "fixture in the first of its workflows given here (or in `workflow`).",
      ),
    values: z
      .record(z.string().regex(/^\d+:\d+$/), z.unknown())
      .optional()
      .describe(
        'Form-field values by "step:action" ids ("20111:50222": 42.5), plain or as input objects. null = no value.',
      ),
    record: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "Any other keys of the full instance record (docs/service.md, Resources), merged as given (e.g. step_assignments).",
      ),
  })
  .describe("A fixture instance, written compactly: only the fields the test cares about.");

const IdsByRule = z
  .union([z.array(Id), z.record(z.string(), z.array(Id))])
  .describe("Instance ids (exactly these), or, for a case testing several rules, rule name → ids.");

export const ChangeExpectSchema = z
  .strictObject({
    instance: Id.describe("Instance id the change is for."),
    kind: z.enum(MUTATING_KINDS).describe("Kind of change."),
    step: Id.optional().describe("The step (complete_step / save_step)."),
    rule: z.string().optional().describe("The rule planning it (only needed when the case tests several rules)."),
    audit: z
      .boolean()
      .optional()
      .describe(
        "true: the change is planned in audit (its rule has mode: audit; apply never sends it); false: it is enforced. Omit to leave unchecked.",
      ),
    inputs: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "The inputs the case cares about: action id or field alias → value, plain (compared with the input object's plain " +
          "value) or as an input object (compared as is). Inputs sent but not stated are not compared (the output says " +
          "which). Omit to leave inputs unchecked.",
      ),
  })
  .describe("One planned change.");

const GroupExpect = z
  .union([z.number().int().min(0), z.array(Id)])
  .describe("The group's count, or exactly the ids of the instances in it.");

export const ReportExpectSchema = z
  .strictObject({
    title: z.string().optional().describe("Pick the report by title (default: the reports in plan order)."),
    rule: z.string().optional().describe("Pick the report by rule."),
    groups: z
      .record(z.string(), GroupExpect)
      .optional()
      .describe('Exactly these groups: key → count or ids ("(no tag)" for untagged).'),
    rows: z.number().int().min(0).optional().describe("Number of rows (matched instances) in the report."),
  })
  .describe("One report of the plan.");

export const ErrorExpectSchema = z
  .strictObject({
    code: z.enum(["evaluation", "limit", "conflict"]).optional().describe("Error code in the plan."),
    rule: z.string().optional().describe("The rule the error names."),
    instance: Id.optional().describe("The instance the error names."),
    message: z.string().optional().describe("Text the message contains."),
  })
  .describe("One error the plan reports.");

export const ExpectSchema = z
  .strictObject({
    selected: IdsByRule.optional().describe(
      "Instances the rule's `select` keeps (checked client-side on the fixtures).",
    ),
    matched: IdsByRule.optional().describe("Instances that are selected and for which `when` holds."),
    changes: z
      .array(ChangeExpectSchema)
      .optional()
      .describe("Exactly the changes planned ([] = none). Omit to leave unchecked."),
    reports: z.array(ReportExpectSchema).optional().describe("Reports and their groups."),
    errors: z
      .array(ErrorExpectSchema)
      .optional()
      .describe("Exactly the plan's errors. Omitted: the plan must have none."),
  })
  .describe("Expected outcome. Omitted keys are not checked, except errors (none allowed unless listed).");

export const CaseSchema = z
  .strictObject({
    name: z.string().min(1).describe("Name of the case, shown in the results table and JUnit."),
    rule: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .describe("The rule under test, or several (planned together, e.g. to test conflicts)."),
    description: z.string().optional().describe("Why this case exists."),
    now: DateTime.optional().describe("The plan time of this case (default: the file's `now`)."),
    instances: z
      .array(FixtureSchema)
      .optional()
      .describe("Fixtures of this case, added to the file's shared `instances` (same id: this one wins)."),
    expect: ExpectSchema,
  })
  .describe("One test case: fixtures, a rule, and what the plan must contain.");

export const TestFileSchema = z
  .strictObject({
    version: z.literal(1).describe("Format version of rule-test files: 1."),
    now: z
      .string()
      .meta({ format: "date-time" })
      .describe(
        "The fixed plan time of every case (ISO 8601): relative dates, $now() and templates resolve against it.",
      ),
    workflows: z
      .record(z.string(), Id)
      .optional()
      .describe("Workflow name → id, for rules that name their workflow ({ name: ... })."),
    field_types: z
      .record(z.string(), FieldType)
      .optional()
      .describe('Types of form fields, by alias or "step:action": plain values then become the matching input object.'),
    instances: z.array(FixtureSchema).optional().describe("Fixtures shared by every case of the file."),
    tests: z.array(CaseSchema).min(1).describe("The test cases."),
  })
  .describe("flowrules rule tests: fixture instances and the expected plan per rule (`flowrules test`).");

export type Fixture = z.infer<typeof FixtureSchema>;
export type ChangeExpect = z.infer<typeof ChangeExpectSchema>;
export type ReportExpect = z.infer<typeof ReportExpectSchema>;
export type ErrorExpect = z.infer<typeof ErrorExpectSchema>;
export type Expect = z.infer<typeof ExpectSchema>;
export type TestFileData = z.infer<typeof TestFileSchema>;
export type FieldTypeName = z.infer<typeof FieldType>;

/** The JSON Schema editors see; ajv validates against the same document for located messages. */
export function testFileJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(TestFileSchema, { target: "draft-2020-12" });
  return { $schema, $id: TEST_SCHEMA_ID, title: "flowrules rule tests", ...rest };
}
