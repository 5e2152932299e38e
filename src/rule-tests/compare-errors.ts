/** `errors`: exactly the plan's errors (limit, conflict, evaluation). Without the key, a plan error fails the case. */
import type { PlanError } from "../plan/types.js";
import type { Observed } from "./observed.js";
import type { ErrorExpect } from "./schema.js";
import type { Failure } from "./types.js";

function fits(e: ErrorExpect, err: PlanError): boolean {
  return (
    (e.code === undefined || e.code === err.code) &&
    (e.rule === undefined || e.rule === err.rule) &&
    (e.instance === undefined || e.instance === err.instance_id) &&
    (e.message === undefined || err.message.includes(e.message))
  );
}

function describe(e: ErrorExpect): string {
  const parts = [
    e.code ?? "an error",
    e.rule ? `rule ${e.rule}` : "",
    e.instance ? `instance ${e.instance}` : "",
    e.message ? `containing ${JSON.stringify(e.message)}` : "",
  ];
  return parts.filter((p) => p !== "").join(", ");
}

export function compareErrors(expected: ErrorExpect[] | undefined, obs: Observed): Failure[] {
  const left = [...obs.plan.errors];
  const out: Failure[] = [];
  for (const e of expected ?? []) {
    const at = left.findIndex((err) => fits(e, err));
    if (at >= 0) left.splice(at, 1);
    else
      out.push({
        subject: "plan error",
        expected: describe(e),
        actual: obs.plan.errors.length === 0 ? "no error" : "not among the plan's errors",
      });
  }
  for (const err of left) {
    out.push({
      ...(err.instance_id !== undefined ? { instance: err.instance_id } : {}),
      subject: `plan error (${err.code})`,
      expected: expected ? "no further error" : "no error (list expected ones under expect.errors)",
      actual: err.message,
    });
  }
  return out;
}
