/**
 * Which action kinds the validators compiled ahead of time were made for (./validate-schema.ts compares): apart from
 * ./validators-now.ts, whose rule-file schema needs zod, so that a run with current validators loads neither.
 */
import { ACTIONS } from "../actions/index.js";

/** Everything the action kinds put into the rule-file and rule-test schemas: their names, whether they change, their fragments. */
export function kindsFingerprint(): string {
  return JSON.stringify(ACTIONS.map((m) => [m.kind, m.mutating, m.schema]));
}
