/** validate's structure checks: every rule against its workflow as the catalog holds it, as located diagnostics. */
import type { Diagnostic } from "../model/rule-types.js";
import { catalogWorkflow, type Catalog } from "./catalog.js";
import { checkRuleStructure } from "./structure-checks.js";
import { didYouMean } from "../text/suggest.js";
import type { CompiledRule, SourcePos, WorkflowRef } from "./types.js";
import type { StructureRef } from "./structure-ref.js";

export function catalogDiagnostics(rules: readonly CompiledRule[], catalog: Catalog, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const rule of rules) {
    // "*": a workflow the rule does not fit is skipped at plan time; a rule that fits none of them plans nothing
    if (rule.workflows === "*") {
      out.push(...checkEvery(rule, catalog, file));
      continue;
    }
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

const samePlace = (a: SourcePos, b: SourcePos): boolean => a.file === b.file && a.line === b.line && a.col === b.col;
const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

/**
 * A rule over `"*"` against every workflow of the catalog (docs/workflows.md, "The workflow catalog"): nothing when
 * one workflow fits it whole (the others are skipped at plan time, as the plan shows); otherwise a warning at each
 * step or field no workflow has, with the closest name any workflow has, or, when each name is somewhere but no
 * workflow has them all, one warning naming the first workflow's first problem. Warnings, not errors: the rule is
 * valid, and a workflow created after the catalog was pulled may fit it.
 */
function checkEvery(rule: CompiledRule, catalog: Catalog, file: string): Diagnostic[] {
  const refs = rule.structure ?? [];
  if (refs.length === 0 || catalog.workflows.length === 0) return [];
  const results = catalog.workflows.map((w) => ({ w, issues: checkRuleStructure(rule, w).issues.filter((i) => i.severity === "error") }));
  if (results.some((r) => r.issues.length === 0)) return [];
  const n = catalog.workflows.length;
  const every = `no workflow in ${file} (${n === 1 ? "1 workflow" : `${n} workflows`})`;
  const fails = (r: (typeof results)[number], ref: StructureRef): boolean =>
    r.issues.some((i) => samePlace(i.pos, ref.pos) && i.where === ref.where);
  const stepRefs = refs.filter((r) => r.kind === "step");
  const stepOf = (field: StructureRef): StructureRef | undefined => stepRefs.find((s) => s.key === field.step);
  const missingSteps = new Set<number>();
  const out: Diagnostic[] = [];
  const warnAt = (ref: StructureRef, what: string, hint: string): void => {
    out.push({
      ...ref.pos,
      severity: "warning",
      code: "structure",
      rule: rule.name,
      message: `rule "${rule.name}": ${ref.where}: ${every} has ${what}, so the rule would be skipped in every one${hint}`,
    });
  };
  for (const ref of stepRefs) {
    if (!results.every((r) => fails(r, ref))) continue;
    missingSteps.add(ref.key);
    const names = [...new Set(catalog.workflows.flatMap((w) => w.steps.map((st) => st.name)))];
    const hint = typeof ref.written === "string" ? didYouMean(ref.written, names) : "";
    warnAt(ref, `a step ${JSON.stringify(ref.written)}`, hint);
  }
  for (const ref of refs) {
    if (ref.kind !== "field" || ref.step === undefined || missingSteps.has(ref.step)) continue;
    const step = stepOf(ref);
    // unresolved where its step is not found, or where the step has no such field
    const stepFails = (r: (typeof results)[number]): boolean => step !== undefined && fails(r, step);
    if (!results.every((r) => stepFails(r) || fails(r, ref))) continue;
    const matches = (st: { id: number; name: string }): boolean =>
      step !== undefined && (typeof step.written === "number" ? st.id === step.written : sameName(st.name, step.written));
    const names = [...new Set(catalog.workflows.flatMap((w) => w.steps.filter(matches).flatMap((st) => st.actions.map((a) => a.name))))];
    const hint = typeof ref.written === "string" ? didYouMean(ref.written, names) : "";
    const inStep = step !== undefined ? ` in a step ${JSON.stringify(step.written)}` : "";
    warnAt(ref, `a field ${JSON.stringify(ref.written)}${inStep}`, hint);
  }
  if (out.length > 0) return out;
  // each name is in some workflow, but no workflow has them all (or a value fits none): the first workflow's problem
  const [first] = results;
  const issue = first?.issues[0];
  if (!first || !issue) return [];
  const problem = issue.message.replace(`rule "${rule.name}": `, "");
  return [
    {
      ...rule.pos,
      severity: "warning",
      code: "structure",
      rule: rule.name,
      message: `rule "${rule.name}": ${every} fits all of its steps, fields and values, so it would be skipped in every workflow; in workflow ${first.w.workflow.id} ${JSON.stringify(first.w.workflow.name)}: ${problem}`,
    },
  ];
}
