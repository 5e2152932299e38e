/**
 * Which rule plans in which workflow: rules outside their active window, workflow names resolved to ids, each rule
 * fitted to each workflow it names (structure errors, skipped workflows of "*"), and per fitted (rule, workflow) what
 * it reads and the query it asks. No instance is read here.
 */
import type { ApiClient } from "../api/index.js";
import type { CompiledRule, RuleSet } from "../rules/types.js";
import type { PlanError } from "../plan/types.js";
import type { WorkflowStructure } from "../model/structure.js";
import { fieldKey } from "../model/field-values.js";
import { errorMessage } from "../model/guards.js";
import { newRuleResult, type RuleResult } from "./assemble.js";
import type { PageNeeds } from "./hydrate.js";
import type { RuleQueryInput } from "./query-plan.js";
import { resolveWorkflows } from "./resolve.js";
import { inactiveRules } from "./active-rules.js";
import { fitRule } from "./structure-fit.js";
import { structureReader, type StructureReader } from "./structure.js";
import { selectQuery, stepsToProbe } from "./select.js";
import { fieldRefs, priorityOnly } from "./plan-fields.js";

/** One rule in one workflow: `key` names it in the query plan (its name, or its name and the workflow's id). */
export interface PlannedRule {
  key: string;
  rule: CompiledRule;
  result: RuleResult;
  needs: PageNeeds;
}

export interface PlanTargets {
  /** one result per rule, in the rule set's order */
  results: RuleResult[];
  planned: PlannedRule[];
  inputs: RuleQueryInput[];
  /** per workflow, the fields any rule reads there */
  fieldKeys: Map<number, Set<string>>;
  ruleErrors: Map<string, PlanError>;
  /** a rule that does not fit its workflow: its structure errors, none of its changes, no part in any listing */
  structureErrors: Map<string, PlanError[]>;
  /** the structures read for the structure checks, also where the plan's names come from (no request of their own) */
  read: Map<number, WorkflowStructure>;
}

export async function planTargets(opts: {
  client: ApiClient;
  ruleSet: RuleSet;
  now: Date;
  catalog: WorkflowStructure[] | undefined;
  warn: (message: string) => void;
}): Promise<PlanTargets> {
  const { client, ruleSet, now, warn } = opts;
  const ruleErrors = new Map<string, PlanError>();
  // a rule outside its active window sends no request at all, not even to resolve its workflow
  const inactive = inactiveRules(ruleSet.rules, now);
  const running = ruleSet.rules.filter((r) => !inactive.has(r.name));
  let resolved;
  try {
    resolved = await resolveWorkflows(client, running);
  } catch (err) {
    resolved = new Map(running.map((r) => [r.name, { error: `rule "${r.name}": ${errorMessage(err)}` }]));
  }

  const fieldKeys = new Map<number, Set<string>>();
  const inputs: RuleQueryInput[] = [];
  const results: RuleResult[] = [];
  const planned: PlannedRule[] = [];
  const read = new Map<number, WorkflowStructure>();
  const reader = structureReader(client);
  const structures: StructureReader = {
    read: async (id, known) => {
      const r = await reader.read(id, known);
      if ("structure" in r) read.set(id, r.structure);
      return r;
    },
  };
  const structureErrors = new Map<string, PlanError[]>();

  for (const written of ruleSet.rules) {
    const off = inactive.get(written.name);
    if (off) {
      results.push({
        ...newRuleResult(
          written,
          typeof written.workflow === "object" && "id" in written.workflow ? written.workflow.id : null,
        ),
        inactive: off,
      });
      continue;
    }
    const r = resolved.get(written.name);
    if (!r || "error" in r) {
      ruleErrors.set(written.name, {
        code: "resolve",
        rule: written.name,
        message: r && "error" in r ? r.error : `rule "${written.name}": unresolved`,
      });
      results.push(newRuleResult(written, null));
      continue;
    }
    // a rule over several workflows is planned in each (requests stay per workflow) into one result
    const targets = "many" in r ? r.many : [r];
    const single = !("many" in r);
    const result = single ? newRuleResult(written, r.id, r.name) : newRuleResult(written, null);
    if (!single) result.workflowIds = targets.map((t) => t.id);
    results.push(result);
    const fits: Array<{ target: { id: number }; fit: Awaited<ReturnType<typeof fitRule>> }> = [];
    for (const target of targets) {
      // steps and fields are checked against the live structure (names resolved to ids) before any selection
      const fit = await fitRule(written, target.id, structures, opts.catalog);
      fit.warnings.forEach(warn);
      if (fit.errors.length > 0) {
        if ("many" in r && r.all) {
          // "*": a workflow the rule's names do not fit is skipped, and the plan says so
          const reason = fit.errors.map((e) => e.message.replace(`rule "${written.name}": `, "")).join("; ");
          result.workflowsSkipped = [...(result.workflowsSkipped ?? []), { workflow_id: target.id, reason }];
          continue;
        }
        structureErrors.set(written.name, [...(structureErrors.get(written.name) ?? []), ...fit.errors]);
      }
      fits.push({ target, fit });
    }
    // a rule that does not fit one of the workflows it names plans in none of them
    const fitsAll = !structureErrors.has(written.name);
    for (const { target, fit } of fits) {
      const rule = fit.rule ?? written;
      if (single) result.rule = rule;
      // a rule's own `exclude` is always counted; the opt-out tag only shows when it excluded something
      if (rule.exclude) result.excluded = 0;
      if (!fit.rule || !fitsAll) continue;
      const key = single ? rule.name : `${rule.name} (workflow ${target.id})`;
      const fields = fieldRefs(rule);
      const keys = fieldKeys.get(target.id) ?? new Set<string>();
      for (const f of fields) keys.add(fieldKey(f.step, f.action));
      fieldKeys.set(target.id, keys);
      planned.push({
        key,
        rule,
        result,
        needs: { processId: target.id, record: rule.needs.record, cacheRecords: false, fields },
      });
      inputs.push({
        rule: key,
        processId: target.id,
        query: selectQuery(rule.select, now),
        record: rule.needs.record,
        fields,
        probeSteps: stepsToProbe(rule),
        priorityOnly: priorityOnly(rule),
      });
    }
  }
  return { results, planned, inputs, fieldKeys, ruleErrors, structureErrors, read };
}
