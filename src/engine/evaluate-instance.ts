/**
 * One rule against one instance: evaluate `when`, then let each action module plan. Pure apart from JSONata's
 * async evaluation; no I/O.
 */
import type { CompiledRule } from "../rules/types.js";
import { actionKind, type ActionPlanInput, type ReportEntry } from "../actions/index.js";
import { buildContext, instanceBindings, type Bindings } from "./context.js";
import { evalExpr, evalValue, truthy } from "./evaluate.js";
import type { InstanceData } from "../actions/instance.js";
import type { PlannedChange, PlanError } from "../plan/types.js";
import { errorMessage } from "../model/guards.js";

export interface InstanceOutcome {
  instance_id: number;
  matched: boolean;
  changes: PlannedChange[];
  /** report entries by index of the report action in rule.actions */
  reportEntries: Array<{ actionIndex: number; entry: ReportEntry }>;
  /** the actions that did not apply, for explanations: `<kind>[ step <id>]: <reason>` */
  skipped: string[];
  /** the same, by the reason alone, as the action kind gave it (the plan counts them by reason) */
  skipReasons: string[];
  error?: PlanError;
  /** the instance's started_time, when its record was read (a rollout limit plans the oldest first) */
  started_time?: string;
}

export async function evaluateInstance(
  rule: CompiledRule,
  data: InstanceData,
  nowIso: string,
  planBindings: Bindings,
): Promise<InstanceOutcome> {
  const bindings = instanceBindings(rule, data, planBindings, nowIso);
  const outcome: InstanceOutcome = {
    instance_id: data.id,
    matched: false,
    changes: [],
    reportEntries: [],
    skipped: [],
    skipReasons: [],
  };
  if (typeof data.record?.started_time === "string") outcome.started_time = data.record.started_time;
  const ctx = buildContext(rule, data, nowIso);
  try {
    // no condition runs without the record it reads: that would plan a change with no precondition
    if (data.unreadable) throw new Error(data.unreadable);
    outcome.matched = rule.when ? truthy(await evalExpr(rule.when, ctx, bindings)) : true;
    if (!outcome.matched) return outcome;
    const evaluate: ActionPlanInput<unknown>["evaluate"] = (v) => evalValue(v, ctx, bindings);
    for (const [actionIndex, action] of rule.actions.entries()) {
      const input = { rule, action, data, ctx, evaluate };
      const kind = actionKind(action.kind);
      if (!kind.mutating) {
        outcome.reportEntries.push({ actionIndex, entry: kind.entry(input) });
        continue;
      }
      const result = await kind.plan(input);
      if ("change" in result)
        outcome.changes.push(rule.mode === "audit" ? { ...result.change, audit: true } : result.change);
      else {
        const target = kind.target(action);
        outcome.skipped.push(`${action.kind}${target === "instance" ? "" : ` step ${target.step}`}: ${result.skipped}`);
        outcome.skipReasons.push(result.skipped);
      }
    }
  } catch (err) {
    // one instance's failure is reported and leaves the others alone; none of its changes are planned
    outcome.changes = [];
    outcome.reportEntries = [];
    outcome.error = {
      code: "evaluation",
      rule: rule.name,
      instance_id: data.id,
      message: `rule "${rule.name}", instance ${data.id}: ${errorMessage(err)}`,
    };
  }
  return outcome;
}
