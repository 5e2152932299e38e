/** Which rules of a set are outside their `active` window at the plan's start, with the reason and the next opening. */
import { activity } from "../rules/active-window.js";
import type { CompiledRule } from "../rules/types.js";

export interface Inactive {
  reason: string;
  next_active_at?: string;
}

export function inactiveRules(rules: readonly CompiledRule[], now: Date): Map<string, Inactive> {
  const out = new Map<string, Inactive>();
  for (const rule of rules) {
    if (!rule.active) continue;
    const a = activity(rule.active, now);
    if (a.active) continue;
    out.set(rule.name, {
      reason: `outside its active window: ${a.reason}${a.next ? `; next active at ${a.next.toISOString()}` : "; it will not run again"}`,
      ...(a.next ? { next_active_at: a.next.toISOString() } : {}),
    });
  }
  return out;
}
