/**
 * Terminal view of `plan --compare`: one line per touched rule with its counts, first of all (the contract's wording), then
 * per rule the changes newly planned, no longer planned and writing other values, then errors and the summary.
 */
import pc from "picocolors";
import { forecastLine, impactLine, impactSize } from "../../engine/impact.js";
import { serviceName } from "../../model/settings.js";
import { terminalSafe } from "../escape.js";
import { planNames } from "../plan/names.js";
import type { PlannedChange } from "../../plan/types.js";
import type { CompareFormatter } from "./types.js";
import { changedTitle, changeIndex, changeTitle, differences, impactSummary, writes } from "./words.js";

export const text: CompareFormatter = (plan, { color }) => {
  const c = pc.createColors(color);
  // the lines come first, before any heading: they are what a reviewer (or a script) reads
  const out: string[] = plan.impact.flatMap((i) => {
    const f = forecastLine(i);
    return f ? [impactLine(i), `  ${f}`] : [impactLine(i)];
  });
  const working = changeIndex(plan);
  const names = planNames(plan);
  for (const i of plan.impact) {
    if (impactSize(i) === 0) continue;
    out.push("", c.bold(`Rule ${i.rule} (${i.status})`));
    if (i.added.length > 0) {
      out.push(`  newly planned (${i.added.length}):`);
      for (const ch of i.added)
        out.push(`    ${c.green("+")} ${changeTitle(ch, names)}`, ...writes(ch, names).map((w) => `        ${w}`));
    }
    if (i.removed.length > 0) {
      out.push(`  no longer planned (${i.removed.length}):`);
      for (const ch of i.removed)
        out.push(`    ${c.red("-")} ${changeTitle(ch, names)}`, ...writes(ch, names).map((w) => `        ${c.dim(w)}`));
    }
    // a rollout limit moves changes between this run and a later one: wanted by both versions, not gone or new
    const moved: Array<[string, PlannedChange[] | undefined]> = [
      ["deferred by the rollout limit, still planned for a later run", i.deferred],
      [
        "no longer deferred: planned this run, where the ref's rollout limit left them to a later one",
        i.no_longer_deferred,
      ],
    ];
    for (const [title, list] of moved) {
      if (!list || list.length === 0) continue;
      out.push(`  ${title} (${list.length}):`);
      for (const ch of list)
        out.push(
          `    ${c.yellow(">")} ${changeTitle(ch, names)}`,
          ...writes(ch, names).map((w) => `        ${c.dim(w)}`),
        );
    }
    if (i.changed.length > 0) {
      out.push(`  write other values (${i.changed.length}):`);
      for (const w of i.changed) {
        out.push(`    ${c.yellow("~")} ${changedTitle(w, working(i.rule, w), i.rule, names)}`);
        for (const d of differences(w, i.rule, names)) out.push(`        ${d.key}: ${c.dim(d.before)} → ${d.after}`);
      }
    }
  }
  if (plan.errors.length > 0) {
    out.push("", c.red(c.bold(`Errors (${plan.errors.length}):`)));
    for (const e of plan.errors) out.push(`  ${c.red("!")} ${e.message}`);
  }
  out.push(
    "",
    c.dim(
      `Compared with ${plan.compare.ref} (${plan.compare.commit.slice(0, 12)}), planned against ${serviceName(plan.base_url, plan.profile)} at ${plan.created_at}.`,
    ),
  );
  out.push(c.bold(impactSummary(plan)));
  // names, values and messages are data: shown, never obeyed by the terminal
  return terminalSafe(`${out.map((l) => l.trimEnd()).join("\n")}\n`, color);
};
