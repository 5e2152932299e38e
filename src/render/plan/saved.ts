/**
 * The line `plan --out FILE` ends with, on stderr: where the plan went and the command that applies exactly it, as
 * Terraform's "To perform exactly these actions, run: terraform apply plan" — `Saved the plan to plan.json. Apply
 * exactly this: flowrules apply plan.json`. The path is quoted for a POSIX shell when it needs it, so the command can
 * be pasted as it is.
 */
import type { Plan } from "../../plan/types.js";
import { plural } from "../../text/plural.js";
import { textSafe } from "../escape.js";
import { changeCounts } from "../../plan/change-counts.js";

/** A word a POSIX shell reads as itself: bare when it holds only safe characters, else in single quotes. */
export function shellWord(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function savedLine(file: string, plan: Pick<Plan, "changes" | "errors">): string {
  const where = `Saved the plan to ${textSafe(file)}.`;
  if (plan.errors.length > 0)
    return `${where} It records ${plural(plan.errors.length, "error")}, so apply refuses it: fix the rules and plan again.\n`;
  const counts = changeCounts(plan.changes);
  const sent = counts.total - counts.audit;
  if (sent === 0) return `${where} It holds no change to apply.\n`;
  return `${where} Apply exactly this: flowrules apply ${textSafe(shellWord(file))}\n`;
}
