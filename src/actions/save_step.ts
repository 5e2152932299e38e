/** save_step: save data in an active step without completing it (the complete_step request with mode save). */
import { canonicalJson } from "../plan/digest.js";
import { sentActions, stepKind } from "./step-kind.js";

/** null, undefined and absent all mean "no value" (sending null clears a field). */
function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

export const saveStep = stepKind({
  kind: "save_step",
  mode: "save",
  description:
    "Save data in an active step of each matched instance without completing it (complete_step with mode save).",
  presentation: {
    symbol: "~",
    legend: "save data in a step",
    summary: (n) => `${n} to save`,
    colour: "yellow",
  },
  verb: "save",
  verbs: "saves",
  // every input_object sent is the one in the snapshot (read with inject_values=true)
  effect(change, record) {
    const stepId = change.step_id ?? -1;
    const actions = record.process_snapshot?.steps?.find((s) => s.id === stepId)?.actions ?? [];
    for (const sent of sentActions(change)) {
      const stored = actions.find((a) => a.id === sent.action_id)?.input_object;
      if (!same(sent.input_object, stored)) return { applied: false, detail: `action ${sent.action_id} does not hold the value sent` };
    }
    return { applied: true, detail: `step ${stepId} holds every value sent` };
  },
});
