/** validate's structure checks: every rule against its workflow as the catalog holds it, as located diagnostics. */
import type { Diagnostic } from "../model/rule-types.js";
import { catalogWorkflow, type Catalog } from "./catalog.js";
import { checkRuleStructure } from "./structure-checks.js";
import { didYouMean } from "../text/suggest.js";
import type { CompiledRule, WorkflowRef } from "./types.js";

export function catalogDiagnostics(rules: readonly CompiledRule[], catalog: Catalog, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const rule of rules) {
    // "*": every workflow of the catalog may or may not fit; the live plan shows which are skipped
    if (rule.workflows === "*") continue;
    for (const ref of rule.workflows ?? [rule.workflow]) out.push(...checkAgainst(rule, ref, catalog, file));
  }
  return out;
}

function checkAgainst(rule: CompiledRule, ref: WorkflowRef, catalog: Catalog, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  {
    const found = catalogWorkflow(catalog, ref);
    const wf = "id" in ref ? `workflow ${ref.id}` : `workflow "${ref.name}"`;
    const [only] = found;
    if (found.length !== 1 || !only) {
      const known = catalog.workflows.map((w) => `${w.workflow.id} "${w.workflow.name}"`).join(", ") || "none";
      // a name close to one the catalog holds is a misspelling (an error); another may be a workflow not pulled yet
      const hint = "name" in ref && found.length === 0 ? didYouMean(ref.name, catalog.workflows.map((w) => w.workflow.name)) : "";
      if (hint) {
        out.push({ ...rule.pos, severity: "error", code: "structure", rule: rule.name, message: `rule "${rule.name}": ${wf} is not in ${file}${hint}` });
        return out;
      }
      out.push({
        ...rule.pos,
        severity: "warning",
        code: "structure",
        rule: rule.name,
        message:
          found.length > 1
            ? `rule "${rule.name}": ${wf} is ambiguous in ${file} (${found.map((w) => w.workflow.id).join(", ")}); its steps and fields are not checked`
            : `rule "${rule.name}": ${wf} is not in ${file} (it holds ${known}); its steps and fields are not checked — run \`flowrules pull\``,
      });
      return out;
    }
    if ((rule.structure ?? []).length === 0) return out;
    for (const i of checkRuleStructure(rule, only).issues) {
      out.push({ ...i.pos, severity: i.severity, code: "structure", rule: rule.name, message: i.message });
    }
  }
  return out;
}
