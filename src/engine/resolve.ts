/**
 * Workflow references → ids. Rules naming a workflow by `{ name }` cost one GET /processes/ per run, shared by all.
 */
import { distance } from "fastest-levenshtein";
import type { ApiClient, Workflow } from "../api/index.js";
import type { CompiledRule } from "../rules/types.js";

export type Resolved = { id: number; name?: string } | { error: string };

export function closestNames(name: string, candidates: string[], n = 3): string[] {
  return [...candidates]
    .sort((a, b) => distance(name.toLowerCase(), a.toLowerCase()) - distance(name.toLowerCase(), b.toLowerCase()))
    .slice(0, n);
}

export async function resolveWorkflows(client: ApiClient, rules: CompiledRule[]): Promise<Map<string, Resolved>> {
  const out = new Map<string, Resolved>();
  let workflows: Workflow[] | undefined;
  for (const rule of rules) {
    const ref = rule.workflow;
    if ("id" in ref) {
      out.set(rule.name, { id: ref.id });
      continue;
    }
    workflows ??= await client.listWorkflows();
    const visible: Workflow[] = workflows;
    const exact = visible.filter((w) => w.name === ref.name);
    const loose = exact.length > 0 ? exact : visible.filter((w) => w.name.toLowerCase() === ref.name.toLowerCase());
    const only = loose[0];
    if (loose.length === 1 && only) {
      out.set(rule.name, { id: only.id, name: only.name });
    } else if (loose.length > 1) {
      out.set(rule.name, {
        error: `rule "${rule.name}": workflow name "${ref.name}" is ambiguous (ids ${loose.map((w) => w.id).join(", ")}); use the id`,
      });
    } else {
      const near = closestNames(ref.name, visible.map((w) => w.name));
      out.set(rule.name, {
        error:
          `rule "${rule.name}": no workflow named "${ref.name}" is visible to this API key` +
          (near.length > 0 ? `; closest: ${near.map((n) => `"${n}"`).join(", ")}` : "; the key sees no workflow"),
      });
    }
  }
  return out;
}
