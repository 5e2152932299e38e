/**
 * One rule against one instance: evaluate `when`, then let each action module plan. Pure apart from JSONata's
 * async evaluation; no I/O.
 */
import type { CompiledRule } from "../rules/types.js";
import { completeStep, saveStep, abort, report } from "../actions/index.js";
import type { ReportEntry } from "../actions/report.js";
import type { ActionOutcome } from "../actions/types.js";
import { buildContext, type Bindings } from "./context.js";
import { evalExpr, truthy } from "./evaluate.js";
import type { InstanceData } from "../actions/instance.js";
import type { PlannedChange, PlanError } from "../plan/types.js";

export interface InstanceOutcome {
  instance_id: number;
  matched: boolean;
  changes: PlannedChange[];
  /** report entries by index of the report action in rule.actions */
  reportEntries: Array<{ actionIndex: number; entry: ReportEntry }>;
  skipped: string[];
  error?: PlanError;
}

export async function evaluateInstance(
  rule: CompiledRule,
  data: InstanceData,
  nowIso: string,
  bindings: Bindings,
): Promise<InstanceOutcome> {
  const outcome: InstanceOutcome = { instance_id: data.id, matched: false, changes: [], reportEntries: [], skipped: [] };
  const ctx = buildContext(rule, data, nowIso);
  try {
    outcome.matched = rule.when ? truthy(await evalExpr(rule.when, ctx, bindings)) : true;
    if (!outcome.matched) return outcome;
    for (const [actionIndex, action] of rule.actions.entries()) {
      let result: ActionOutcome | undefined;
      switch (action.kind) {
        case "complete_step":
          result = await completeStep.plan({ rule, action, data, ctx, bindings });
          break;
        case "save_step":
          result = await saveStep.plan({ rule, action, data, ctx, bindings });
          break;
        case "abort":
          result = await abort.plan({ rule, action, data, ctx, bindings });
          break;
        case "report":
          outcome.reportEntries.push({ actionIndex, entry: report.entry({ rule, action, data, ctx, bindings }) });
          break;
      }
      if (result && "change" in result) outcome.changes.push(result.change);
      else if (result) outcome.skipped.push(`${action.kind}: ${result.skipped}`);
    }
  } catch (err) {
    // one instance's failure is reported and leaves the others alone; none of its changes are planned
    outcome.changes = [];
    outcome.reportEntries = [];
    outcome.error = {
      code: "evaluation",
      rule: rule.name,
      instance_id: data.id,
      message: `rule "${rule.name}", instance ${data.id}: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  return outcome;
}
