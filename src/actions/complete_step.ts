/** complete_step: complete an active step of each matched instance, sending the given inputs. */
import { activeSteps, statusOf } from "./instance.js";
import { stepKind } from "./step-kind.js";
import { plural } from "../text/plural.js";

export const completeStep = stepKind({
  kind: "complete_step",
  mode: "complete",
  description:
    "Complete an active step of each matched instance (POST /instances/{id}/complete_step/ with mode complete).",
  presentation: {
    symbol: "✓",
    legend: "complete a step",
    summary: (n) => `${plural(n, "step")} to complete`,
    colour: "green",
  },
  verb: "complete",
  verbs: "completes",
  // the step is no longer active and was completed (its completed_time, with steps_time_frame=true), or — when the
  // snapshot carries no times — the instance moved on without being aborted
  effect(change, record) {
    const stepId = change.step_id ?? -1;
    const step = record.process_snapshot?.steps?.find((s) => s.id === stepId);
    if (activeSteps(record).includes(stepId)) return { applied: false, detail: `step ${stepId} is still active` };
    if (step?.completed_time) return { applied: true, detail: `step ${stepId} completed at ${step.completed_time}` };
    if (step && "completed_time" in step)
      return { applied: false, detail: `step ${stepId} is not active and was not completed` };
    return statusOf(record) === "aborted"
      ? { applied: false, detail: `the instance was aborted` }
      : { applied: true, detail: `step ${stepId} is no longer active` };
  },
});
