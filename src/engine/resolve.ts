/**
 * Workflow references → ids. Rules naming a workflow by `{ name }` cost one GET /processes/ per run, shared by all.
 */
import { distance } from "fastest-levenshtein";
import type { ApiClient, Workflow } from "../api/index.js";
import type { CompiledRule, WorkflowRef } from "../rules/types.js";

export type Resolved =
  | { id: number; name?: string }
  | { error: string }
  /** a rule over several workflows: each of them, in order (`all`: every workflow the key sees, "*") */
  | { many: Array<{ id: number; name?: string }>; all: boolean };

export function closestNames(name: string, candidates: string[], n = 3): string[] {
  return [...candidates]
    .sort((a, b) => distance(name.toLowerCase(), a.toLowerCase()) - distance(name.toLowerCase(), b.toLowerCase()))
    .slice(0, n);
}

function resolveOne(
  rule: string,
  ref: WorkflowRef,
  visible: () => Promise<Workflow[]>,
): Promise<{ id: number; name?: string } | { error: string }> | { id: number } {
  if ("id" in ref) return { id: ref.id };
  return (async () => {
    const all = await visible();
    const exact = all.filter((w) => w.name === ref.name);
    const loose = exact.length > 0 ? exact : all.filter((w) => w.name.toLowerCase() === ref.name.toLowerCase());
    const only = loose[0];
    if (loose.length === 1 && only) return { id: only.id, name: only.name };
    if (loose.length > 1)
      return {
        error: `rule "${rule}": workflow name "${ref.name}" is ambiguous (ids ${loose.map((w) => w.id).join(", ")}); use the id`,
      };
    const near = closestNames(
      ref.name,
      all.map((w) => w.name),
    );
    return {
      error:
        `rule "${rule}": no workflow named "${ref.name}" is visible to this API key` +
        (near.length > 0 ? `; closest: ${near.map((n) => `"${n}"`).join(", ")}` : "; the key sees no workflow"),
    };
  })();
}

export async function resolveWorkflows(client: ApiClient, rules: CompiledRule[]): Promise<Map<string, Resolved>> {
  const out = new Map<string, Resolved>();
  let workflows: Promise<Workflow[]> | undefined;
  // one GET /processes/ per run, whoever asks first
  const visible = (): Promise<Workflow[]> => (workflows ??= client.listWorkflows());
  for (const rule of rules) {
    if (rule.workflows === "*") {
      const all = [...(await visible())].sort((a, b) => a.id - b.id);
      out.set(rule.name, { many: all.map((w) => ({ id: w.id, name: w.name })), all: true });
      continue;
    }
    if (rule.workflows) {
      const many: Array<{ id: number; name?: string }> = [];
      const errors: string[] = [];
      for (const ref of rule.workflows) {
        const r = await resolveOne(rule.name, ref, visible);
        if ("error" in r) errors.push(r.error);
        else if (!many.some((m) => m.id === r.id)) many.push(r);
      }
      out.set(rule.name, errors.length > 0 ? { error: errors.join("; ") } : { many, all: false });
      continue;
    }
    out.set(rule.name, await resolveOne(rule.name, rule.workflow, visible));
  }
  return out;
}
