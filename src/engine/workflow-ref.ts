/** A workflow named on the command line (`describe`, `init --workflow`): an id, or a name matching exactly one. */
import type { Workflow } from "../api/index.js";
import { closestNames } from "./resolve.js";
import { plural } from "../text/plural.js";

export function findWorkflow(all: readonly Workflow[], ref: string): { workflow: Workflow } | { error: string } {
  const text = ref.trim();
  if (/^[0-9]+$/.test(text)) {
    const w = all.find((x) => x.id === Number(text));
    if (w) return { workflow: w };
    return {
      error: `no workflow ${text} is visible to this API key (it sees ${plural(all.length, "workflow")}; \`flowrules workflows\` lists them)`,
    };
  }
  const exact = all.filter((w) => w.name === text);
  const hits = exact.length > 0 ? exact : all.filter((w) => w.name.toLowerCase() === text.toLowerCase());
  const [only] = hits;
  if (hits.length === 1 && only) return { workflow: only };
  if (hits.length > 1) {
    return {
      error: `workflow name "${text}" is ambiguous: ${hits.map((w) => `${w.id}${w.folder?.name ? ` (folder ${w.folder.name})` : ""}`).join(", ")} carry it; use the id`,
    };
  }
  const near = closestNames(
    text,
    all.map((w) => w.name),
  );
  return {
    error: `no workflow named "${text}" is visible to this API key${near.length > 0 ? `; closest: ${near.map((n) => `"${n}"`).join(", ")}` : "; the key sees no workflow"}`,
  };
}
