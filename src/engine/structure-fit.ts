/**
 * A rule against its workflow's live structure: the structure checks (src/rules/structure-checks.ts) with names
 * resolved to ids, plus the differences from the committed workflow catalog, as warnings.
 */
import type { PlanError } from "../plan/types.js";
import { structureDrift } from "../rules/catalog.js";
import { checkRuleStructure, hasNames } from "../rules/structure-checks.js";
import type { CompiledRule } from "../rules/types.js";
import type { WorkflowStructure } from "../model/structure.js";
import type { StructureReader } from "./structure.js";

export interface RuleFit {
  /** the rule with ids for names; absent when it does not fit (none of its changes may be planned) */
  rule?: CompiledRule;
  errors: PlanError[];
  warnings: string[];
}

export async function fitRule(
  rule: CompiledRule,
  workflowId: number,
  reader: StructureReader,
  catalog?: WorkflowStructure[],
): Promise<RuleFit> {
  // a rule that names no step or field has nothing to check: its workflow's structure is not read
  if ((rule.structure ?? []).length === 0) return { rule, errors: [], warnings: [] };
  const read = await reader.read(workflowId);
  if ("unavailable" in read) {
    if (hasNames(rule)) {
      return {
        errors: [
          {
            code: "structure",
            rule: rule.name,
            message: `rule "${rule.name}": ${read.unavailable}; the step and field names it uses cannot be resolved`,
          },
        ],
        warnings: [],
      };
    }
    return {
      rule,
      errors: [],
      warnings: [`${read.unavailable}; the step and field ids of rule "${rule.name}" are not checked`],
    };
  }
  const live = read.structure;
  const warnings: string[] = [];
  const committed = catalog?.find((w) => w.workflow.id === workflowId);
  if (committed) {
    const drift = structureDrift(committed, live);
    if (drift.length > 0) warnings.push(`the workflow catalog differs from the live workflow: ${drift.join("; ")}`);
  }
  const checked = checkRuleStructure(rule, live);
  for (const i of checked.issues) if (i.severity === "warning") warnings.push(i.message);
  const errors: PlanError[] = checked.issues
    .filter((i) => i.severity === "error")
    .map((i) => ({
      code: "structure",
      rule: rule.name,
      message: `${i.message} (${i.pos.file}:${i.pos.line}:${i.pos.col})`,
    }));
  return { ...(checked.rule ? { rule: checked.rule } : {}), errors, warnings };
}
