/** `flowrules workflows`: one line per workflow, id first. */
import type { Workflow } from "../../api/index.js";
import { textSafeLines } from "../escape.js";

export function workflowsText(all: readonly Workflow[]): string {
  if (all.length === 0) return "No workflow is visible to this API key.\n";
  const width = Math.max(...all.map((w) => String(w.id).length));
  const lines = [...all]
    .sort((a, b) => (a.folder?.name ?? "").localeCompare(b.folder?.name ?? "") || a.name.localeCompare(b.name))
    .map((w) => `${String(w.id).padStart(width)}  ${w.name}${w.folder?.name ? `  (folder ${w.folder.name})` : ""}`);
  return textSafeLines(`${lines.join("\n")}\n`);
}
