/** save_step: save data in an active step without completing it (the complete_step request with mode save). */
import { fieldTypeOf, sameValue } from "../model/values.js";
import { sentActions, stepKind } from "./step-kind.js";

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
      const action = actions.find((a) => a.id === sent.action_id);
      // by meaning: the service may store the value in its own format ("12.50", "+00:00" with microseconds, a plain
      // radio string); null, undefined and absent all mean "no value" (sending null clears a field)
      const type = fieldTypeOf(action?.type, action?.settings);
      if (!sameValue(sent.input_object, action?.input_object, type))
        return { applied: false, detail: `action ${sent.action_id} does not hold the value sent` };
    }
    return { applied: true, detail: `step ${stepId} holds every value sent` };
  },
});
