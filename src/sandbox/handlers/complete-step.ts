/**
 * 4.4 POST /instances/{id}/complete_step/ — save values into an active step, or complete it.
 * Checks, in order: 404 unknown/invisible instance; 415 non-JSON body; 400 malformed body; 400 step not of this
 * workflow; 403 caller is not step owner, workflow lead or administrator; 400 instance not running, step not active,
 * action not of the step. Answers the updated record with input values (as GET with inject_values=true).
 */
import { z } from "zod";
import { canActOnStep } from "../access.js";
import { isTrue, type ApiResponse, type RequestContext } from "../context.js";
import { HttpError, StateError, badRequest } from "../errors.js";
import { stepInWorkflow, workflowOf } from "../lookup.js";
import { instanceRecord } from "../serialize.js";
import { describeIssues, malformed, unsupportedMedia } from "./body-errors.js";
import { visibleInstance } from "./lookup-visible.js";

const actionSchema = z
  .object({ action_id: z.number().int(), input_object: z.unknown() })
  .refine((a) => a.input_object !== undefined, {
    message: "input_object is required (null clears the field)",
    path: ["input_object"],
  });

const bodySchema = z.object({
  step_id: z.number().int(),
  actions: z.array(actionSchema).default([]),
  mode: z.enum(["save", "complete"]).default("complete"),
});

export function completeStep(ctx: RequestContext): ApiResponse {
  const inst = visibleInstance(ctx, ctx.params[0]);
  const body = ctx.body;
  if (body.kind === "none")
    throw badRequest(
      'Request body required: {"step_id": int, "actions": [{"action_id": int, "input_object": …}], "mode": "save" | "complete"}.',
    );
  if (body.kind === "invalid") throw malformed(body);
  if (body.kind !== "json") throw unsupportedMedia(body.media, "application/json");
  const parsed = bodySchema.safeParse(body.value);
  if (!parsed.success) throw badRequest(`Invalid body: ${describeIssues(parsed.error)}`);
  const { step_id: stepId, actions, mode } = parsed.data;

  const workflow = workflowOf(inst.processId);
  const step = stepInWorkflow(workflow, stepId);
  if (!step) {
    const steps = workflow.steps.map((s) => s.id).join(", ");
    throw badRequest(
      `Step ${stepId} is not a step of workflow ${workflow.id} ("${workflow.name}"); its steps: ${steps}.`,
    );
  }
  if (!canActOnStep(ctx.user, workflow, step)) {
    throw new HttpError(
      403,
      `User "${ctx.user.name}" may not ${mode} step ${stepId} ("${step.name}"): only its assigned owners, the workflow's leads and administrators may.`,
    );
  }
  try {
    const updated = ctx.store.applyStep(inst.id, stepId, actions, mode);
    const record = instanceRecord(updated, ctx.store.urls, {
      injectValues: true,
      stepsTimeFrame: isTrue(ctx.query.one("steps_time_frame")),
    });
    return { status: 200, body: record };
  } catch (err) {
    if (err instanceof StateError) throw badRequest(err.message);
    throw err;
  }
}
