/**
 * The complete_step request body (spec 4.4) checked by hand: the verdict, the value and the first problem that
 * CompleteStepBodySchema (./schemas.ts) gives, for any JSON value (a plan file is JSON), without loading zod. The step
 * kinds check and send bodies with it, and they are registered on every run, `validate` included, which must start
 * fast (docs/performance.md, "Start-up"). test/api/step-body.test.ts proves it equal to the schema over random bodies.
 */
import type { CompleteStepBody } from "./schemas.js";

export type StepBodyParse =
  { success: true; data: CompleteStepBody } | { success: false; issue: { jsonPath: string; problem: string } };

/** How the schema names a value it did not expect. */
function received(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number" && Number.isNaN(v)) return "NaN";
  return typeof v;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A whole number as `z.number().int()` takes it, or the problem with it. */
function intProblem(v: unknown): string | undefined {
  if (v === undefined) return "missing (expected number)";
  if (typeof v !== "number" || !Number.isFinite(v)) return `expected number, received ${received(v)}`;
  if (!Number.isInteger(v)) return "expected int, received number";
  if (v > Number.MAX_SAFE_INTEGER) return `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`;
  if (v < Number.MIN_SAFE_INTEGER) return `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`;
  return undefined;
}

const MODES: ReadonlyArray<unknown> = ["save", "complete"];

/** The body as sent (unknown keys dropped), or the first problem in the schema's order: step_id, actions, mode. */
export function parseCompleteStepBody(body: unknown): StepBodyParse {
  const fail = (jsonPath: string, problem: string): StepBodyParse => ({ success: false, issue: { jsonPath, problem } });
  if (!isObject(body)) return fail("$", `expected object, received ${received(body)}`);
  const stepProblem = intProblem(body.step_id);
  if (stepProblem !== undefined) return fail("$.step_id", stepProblem);
  const data: CompleteStepBody = { step_id: body.step_id as number };
  if (body.actions !== undefined) {
    if (!Array.isArray(body.actions)) return fail("$.actions", `expected array, received ${received(body.actions)}`);
    const actions: NonNullable<CompleteStepBody["actions"]> = [];
    for (const [i, a] of (body.actions as unknown[]).entries()) {
      const at = `$.actions[${i}]`;
      if (!isObject(a)) return fail(at, `expected object, received ${received(a)}`);
      const idProblem = intProblem(a.action_id);
      if (idProblem !== undefined) return fail(`${at}.action_id`, idProblem);
      if (!("input_object" in a)) return fail(`${at}.input_object`, "missing (expected nonoptional)");
      actions.push({ action_id: a.action_id as number, input_object: a.input_object });
    }
    data.actions = actions;
  }
  if (body.mode !== undefined) {
    if (!MODES.includes(body.mode)) return fail("$.mode", 'Invalid option: expected one of "save"|"complete"');
    data.mode = body.mode as "save" | "complete";
  }
  return { success: true, data };
}
