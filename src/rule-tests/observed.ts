/** What one test case produced: the plan, and per rule and instance the explanation (selected? matched? why?). */
import type { RuleExplanation } from "../engine/explain/index.js";
import type { Plan } from "../plan/types.js";
import type { CompiledRule, SourcePos } from "../rules/types.js";
import type { Failure } from "./types.js";

export interface Observed {
  rules: CompiledRule[];
  /** rule name → instance id → explanation, for the fixtures in the rule's workflow */
  explanations: Map<string, Map<number, RuleExplanation>>;
  names: Map<number, string>;
  plan: Plan;
}

/** Position of a path inside the case's `expect` (for mistakes in the expectations themselves). */
export type Locate = (path: ReadonlyArray<string | number>) => SourcePos;

export function instanceFailure(
  obs: Observed,
  instance: number,
  f: Omit<Failure, "instance" | "instance_name">,
): Failure {
  const name = obs.names.get(instance);
  return { instance, ...(name !== undefined ? { instance_name: name } : {}), ...f };
}
