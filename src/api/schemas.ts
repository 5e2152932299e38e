/**
 * zod schemas for the resources of docs/service.md ("Resources"), with their inferred types.
 *
 * Tolerant on purpose: objects are loose (unknown fields are kept, so a newer service does not break us), and fields
 * the spec does not promise are `nullish`. Strict only where the engine relies on a value (ids, instance status).
 */
import { z } from "zod";

const nullishString = z.string().nullish();
const nullishDate = z.string().nullish(); // ISO 8601; kept as text, the engine parses what it compares

// 2.1 Workflow
export const WorkflowSchema = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  description: nullishString,
  url: nullishString,
  folder: z.looseObject({ id: z.number().int(), name: nullishString }).nullish(),
});
export type Workflow = z.infer<typeof WorkflowSchema>;
export const WorkflowListSchema = z.array(WorkflowSchema);

// 2.2 Instance list element
export const InstanceStatusSchema = z.enum(["running", "completed", "aborted"]);
export type InstanceStatus = z.infer<typeof InstanceStatusSchema>;

export const InstanceListItemSchema = z.looseObject({
  // an id the service's paths cannot carry (0, negative) is refused with the answer, never planned
  id: z.number().int().positive(),
  // required by the spec, but an automatically named instance may carry null: read it as ""
  name: z
    .string()
    .nullish()
    .transform((v) => v ?? ""),
  status: InstanceStatusSchema,
  public_url: nullishString,
});
export type InstanceListItem = z.infer<typeof InstanceListItemSchema>;

// process_snapshot: structure left open by the spec; docs/design.md ("process_snapshot") fixes the shape both sides assume.
export const SnapshotActionSchema = z.looseObject({
  id: z.number().int(),
  name: nullishString,
  type: nullishString,
  /** with inject_values=true; text/number {inputValue}, date {date}, radio, checklist — or anything else */
  input_object: z.unknown().optional(),
});
export type SnapshotAction = z.infer<typeof SnapshotActionSchema>;

export const SnapshotStepSchema = z.looseObject({
  id: z.number().int(),
  name: nullishString,
  position: z.number().nullish(),
  type: nullishString,
  /** with steps_time_frame=true */
  completed_time: nullishDate,
  actions: z.array(SnapshotActionSchema).nullish(),
});
export type SnapshotStep = z.infer<typeof SnapshotStepSchema>;

export const ProcessSnapshotSchema = z.looseObject({
  id: z.number().int().nullish(),
  name: nullishString,
  steps: z.array(SnapshotStepSchema).nullish(),
});
export type ProcessSnapshot = z.infer<typeof ProcessSnapshotSchema>;

// 2.3 Instance (full record) — note: no status field; derive it from completed_time / aborted_time.
export const StepAssignmentSchema = z.looseObject({ step_id: z.number().int(), user_id: z.number().int() });

export const InstanceRecordSchema = z.looseObject({
  id: z.number().int().positive(),
  process: nullishString,
  url: nullishString,
  name: nullishString,
  started_time: nullishDate,
  completed_time: nullishDate,
  aborted_time: nullishDate,
  last_updated_time: nullishDate,
  process_snapshot: ProcessSnapshotSchema.nullish(),
  active_step_ids: z.array(z.number().int()).nullish(),
  /** element fields not shown by the spec */
  step_deadlines: z.array(z.unknown()).nullish(),
  public_url: nullishString,
  stage: nullishString,
  visibility_mode: nullishString,
  deadline: nullishDate,
  /** V, H, or absent/null for Regular */
  priority: nullishString,
  tags: z.array(z.string()).nullish(),
  step_assignments: z.array(StepAssignmentSchema).nullish(),
  visibility_teams: z.array(z.number().int()).nullish(),
});
export type InstanceRecord = z.infer<typeof InstanceRecordSchema>;

// 2.4 Form-field value record
const jsonObject = z.record(z.string(), z.unknown());
export const FormFieldValueSchema = z.looseObject({
  instance_id: z.number().int().positive(),
  instance_name: nullishString,
  /** the input object, same forms as process_snapshot input_object; null/absent when the field has no value */
  value: jsonObject.nullish(),
  settings: jsonObject.nullish(),
});
export type FormFieldValue = z.infer<typeof FormFieldValueSchema>;

// 2.5 Pagination envelope
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    // DRF's CursorPagination sends no count: then the listing ends on `next: null`
    count: z
      .number()
      .int()
      .nonnegative()
      .nullish()
      .transform((v) => v ?? null),
    next: z
      .string()
      .nullish()
      .transform((v) => v ?? null),
    previous: z
      .string()
      .nullish()
      .transform((v) => v ?? null),
    results: z.array(item),
  });
}
export const InstanceListPageSchema = pageSchema(InstanceListItemSchema);
export const FormFieldPageSchema = pageSchema(FormFieldValueSchema);

// 4.4 Complete step request body
export const CompleteStepActionSchema = z.object({
  action_id: z.number().int(),
  input_object: z.unknown(),
});
export const CompleteStepBodySchema = z.object({
  step_id: z.number().int(),
  actions: z.array(CompleteStepActionSchema).optional(),
  mode: z.enum(["save", "complete"]).optional(),
});
export type CompleteStepBody = z.infer<typeof CompleteStepBodySchema>;

// 4.5 Bulk abort response (meaning of ids — requested or actually stopped — not shown by the spec)
export const BulkAbortResponseSchema = z.looseObject({ ids: z.array(z.number().int()) });

/** `$.results[3].id` from a zod issue path. */
export function jsonPathOf(path: ReadonlyArray<PropertyKey>): string {
  let out = "$";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** zod's "expected object, received undefined" says that a key is missing. */
function plainProblem(message: string): string {
  const text = message.replace(/^Invalid input: /, "");
  const missing = /^expected (.+), received undefined$/.exec(text);
  return missing ? `missing (expected ${missing[1] ?? "a value"})` : text;
}

/** First mismatch of a failed parse, as { jsonPath, problem } ("expected number, received string"). */
export function describeIssue(error: z.ZodError): { jsonPath: string; problem: string } {
  const issue = error.issues[0];
  if (!issue) return { jsonPath: "$", problem: "invalid" };
  // dig into union branches so the path points at the real culprit
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const inner = issue.errors[0]?.[0];
    if (inner) {
      return {
        jsonPath: jsonPathOf([...issue.path, ...inner.path]),
        problem: plainProblem(inner.message),
      };
    }
  }
  return { jsonPath: jsonPathOf(issue.path), problem: plainProblem(issue.message) };
}
