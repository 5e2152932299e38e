/**
 * The planner as a pure function of (rules, instances, now): what `flowrules test` and unit tests call. The live
 * pipeline (run-plan.ts) feeds the same functions page by page.
 */
import type { CompiledRule } from "../rules/types.js";
import { VERSION } from "../model/version.js";
import { addOutcome, assemblePlan, newRuleResult } from "./assemble.js";
import { planBindings } from "./context.js";
import { evaluateInstance } from "./evaluate-instance.js";
import type { InstanceData } from "../actions/instance.js";
import type { Plan } from "../plan/types.js";

export interface PureRuleInput {
  rule: CompiledRule;
  workflowId: number;
  /** the instances the rule's selection returned */
  instances: InstanceData[];
}

export async function planFromInstances(
  inputs: PureRuleInput[],
  now: Date,
  meta: { baseUrl?: string; rulesDigest?: string } = {},
): Promise<Plan> {
  const bindings = planBindings(now);
  const nowIso = now.toISOString();
  const results = [];
  for (const input of inputs) {
    const result = newRuleResult(input.rule, input.workflowId);
    for (const data of input.instances) addOutcome(result, await evaluateInstance(input.rule, data, nowIso, bindings));
    results.push(result);
  }
  return assemblePlan(results, {
    createdAt: now,
    baseUrl: meta.baseUrl ?? "",
    rulesDigest: meta.rulesDigest ?? "",
    version: VERSION,
  });
}
