/**
 * The planner as a pure function of (rules, instances, now): what `flowrules test` and unit tests call. The live
 * pipeline (plan-live.ts) feeds the same functions page by page.
 */
import type { CompiledRule } from "../rules/types.js";
import { VERSION } from "../model/version.js";
import { addOutcome, assemblePlan, newRuleResult } from "./assemble.js";
import { planBindings } from "./context.js";
import { evaluateInstance } from "./evaluate-instance.js";
import type { InstanceData } from "../actions/instance.js";
import type { Plan } from "../plan/types.js";
import { inactiveRules } from "./active-rules.js";
import { exclusionReason, exclusionsOf } from "./exclusions.js";
import type { NameSource } from "./names.js";
import type { SpillOptions } from "../fs/spill-bytes.js";

export interface PureRuleInput {
  rule: CompiledRule;
  workflowId: number;
  /** a rule over several workflows: each of them (the instances may come from any; the entry's workflow_id is null) */
  workflowIds?: number[];
  /** the instances the rule's selection returned */
  instances: InstanceData[];
}

export async function planFromInstances(
  inputs: PureRuleInput[],
  now: Date,
  meta: {
    baseUrl?: string;
    rulesDigest?: string;
    optOutTag?: string;
    names?: ReadonlyMap<number, readonly NameSource[]>;
    /** where the planned changes are held past how many bytes (src/fs/spill-bytes.ts; tests set it low) */
    spill?: SpillOptions;
  } = {},
): Promise<Plan> {
  const bindings = planBindings(now);
  const nowIso = now.toISOString();
  const results = [];
  for (const input of inputs) {
    const result = newRuleResult(input.rule, input.workflowIds ? null : input.workflowId, undefined, meta.spill);
    if (input.workflowIds) result.workflowIds = input.workflowIds;
    results.push(result);
    const off = inactiveRules([input.rule], now).get(input.rule.name);
    if (off) {
      result.inactive = off;
      continue;
    }
    const ex = exclusionsOf(input.rule, meta.optOutTag);
    if (input.rule.exclude) result.excluded = 0;
    for (const data of input.instances) {
      if (exclusionReason(ex, data.id, data.record?.tags ?? []) !== undefined) {
        result.selected++;
        result.excluded = (result.excluded ?? 0) + 1;
        continue;
      }
      addOutcome(result, await evaluateInstance(input.rule, data, nowIso, bindings));
    }
  }
  return assemblePlan(results, {
    createdAt: now,
    baseUrl: meta.baseUrl ?? "",
    rulesDigest: meta.rulesDigest ?? "",
    version: VERSION,
    ...(meta.names ? { names: meta.names } : {}),
  });
}
