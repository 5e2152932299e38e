/** validate's structure checks: every rule against its workflow as the catalog holds it, as located diagnostics. */
import type { Diagnostic } from "../model/rule-types.js";
import { catalogWorkflow, type Catalog } from "./catalog.js";
import { checkRuleStructure } from "./structure-checks.js";
import type { CompiledRule } from "./types.js";

export function catalogDiagnostics(rules: readonly CompiledRule[], catalog: Catalog, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const rule of rules) {
    if ((rule.structure ?? []).length === 0) continue;
    const ref = rule.workflow;
    const found = catalogWorkflow(catalog, ref);
    const wf = "id" in ref ? `workflow ${ref.id}` : `workflow "${ref.name}"`;
    const [only] = found;
    if (found.length !== 1 || !only) {
      const known = catalog.workflows.map((w) => `${w.workflow.id} "${w.workflow.name}"`).join(", ") || "none";
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
      continue;
    }
    for (const i of checkRuleStructure(rule, only).issues) {
      out.push({ ...i.pos, severity: i.severity, code: "structure", rule: rule.name, message: i.message });
    }
  }
  return out;
}
