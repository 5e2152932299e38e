/**
 * `describe` as text: the steps in order, each with its form fields as lines ready to paste under `fields:` (ids
 * first, the field's name, type and options as a comment).
 */
import { fieldAliases, type WorkflowStructure } from "../../model/structure.js";
import { textSafeLines } from "../escape.js";
import { displayWidth, padDisplay } from "../table.js";

export function describeText(s: WorkflowStructure): string {
  const out: string[] = [];
  const folder = s.workflow.folder ? `, folder ${s.workflow.folder.name}` : "";
  out.push(`workflow ${s.workflow.id} "${s.workflow.name}"${folder}`);
  if (s.source) out.push(`(read from instance ${s.source.instance_id}, started ${s.source.started_time})`);
  const aliases = fieldAliases(s);
  const width = Math.max(0, ...[...aliases.values()].map(displayWidth));
  for (const step of s.steps) {
    out.push("");
    out.push(
      `step ${step.id}  "${step.name}"  (position ${step.position}${step.type !== "form" ? `, ${step.type}` : ""})`,
    );
    if (step.actions.length === 0) {
      out.push("  (no form fields)");
      continue;
    }
    for (const a of step.actions) {
      const alias = padDisplay(`${aliases.get(a.id) ?? "field"}:`, width + 1);
      const opts = a.options ? `: ${a.options.join(", ")}` : "";
      const req = a.required ? ", required" : "";
      out.push(`  ${alias} { step: ${step.id}, action: ${a.id} }   # "${a.name}", ${a.type}${req}${opts}`);
    }
  }
  return textSafeLines(`${out.join("\n")}\n`);
}
