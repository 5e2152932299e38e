/**
 * Terminal output of `flowrules explain`: per rule a verdict line, then select (✓ / ✗ / ? per filter), the fields
 * it reads, `when` with its clauses, and the changes it would plan.
 */
import { mutatingKind } from "../../actions/index.js";
import pc from "picocolors";
import { serviceName } from "../../model/settings.js";
import { plural } from "../../text/plural.js";
import { diffKeys, showValue } from "../plan/summary.js";
import { describeNamed, keyLabel, NO_NAMES, planNames, workflowLabel, type PlanNames } from "../plan/names.js";
import type { PlannedChange } from "../../plan/types.js";
import { show, showWritten } from "../show.js";
import type { ClauseExplanation, Explanation, FilterResult, RuleExplanation } from "../../engine/explain/types.js";
import { terminalSafe } from "../escape.js";
import { table } from "../table.js";

type Colors = ReturnType<typeof pc.createColors>;

function mark(c: Colors, r: FilterResult | boolean): string {
  if (r === true || r === "pass") return c.green("✓");
  if (r === false || r === "fail") return c.red("✗");
  return c.yellow("?");
}

function pad(rows: Array<[string, string]>, indent: string): string[] {
  return table(rows, { indent });
}

function clauseLines(c: Colors, cl: ClauseExplanation, indent: string): string[] {
  const value = cl.error ? c.red(`error: ${cl.error}`) : `→ ${show(cl.value)}`;
  const lines = [`${indent}${mark(c, cl.error ? "fail" : cl.holds)} ${cl.source}  ${value}`];
  if (cl.parts) {
    lines.push(`${indent}  ${c.dim(cl.op === "and" ? "all of:" : "any of:")}`);
    for (const p of cl.parts) lines.push(...clauseLines(c, p, `${indent}    `));
  }
  return lines;
}

function changeLines(ch: PlannedChange, indent: string, names: PlanNames): string[] {
  const kind = mutatingKind(ch.kind);
  // a whole-instance change reads best as its legend ("abort the instance"), a step change as its label
  const what = kind.changeTarget(ch) === "instance" ? kind.presentation.legend : describeNamed(ch, names).label;
  const out = [`${indent}${what}  (${ch.request.method} ${ch.request.path})`];
  for (const k of diffKeys(ch.before, ch.after))
    out.push(`${indent}    ${keyLabel(names, ch, k)}: ${showValue(ch.before[k])} → ${showValue(ch.after[k])}`);
  return out;
}

/** A step id with its name, when the instance's snapshot names it: `20111 "Manager approval"`. */
function stepWithName(names: PlanNames, workflowId: number, step: number): string {
  const name = names.step(workflowId, step);
  return name !== undefined ? `${step} ${JSON.stringify(name)}` : String(step);
}

function verdict(c: Colors, r: RuleExplanation): string {
  if (r.error) return c.red("ERROR");
  if (r.inactive) return c.yellow(`INACTIVE, ${r.inactive}`);
  if (r.excluded) return c.yellow(`EXCLUDED, ${r.excluded.replace(/^excluded: /, "")}`);
  if (r.selected === "fail") return c.red("not selected");
  if (!r.matched) return c.yellow("selected, `when` does not hold");
  const note = r.selected === "unknown" ? " (if the filters marked ? hold on the server)" : "";
  const acts = r.changes.length > 0 ? `would plan ${plural(r.changes.length, "change")}` : "no change";
  return c.green(`MATCHES, ${acts}${r.reports.length > 0 ? `, in ${plural(r.reports.length, "report")}` : ""}`) + note;
}

export function ruleLines(c: Colors, r: RuleExplanation, names: PlanNames = NO_NAMES): string[] {
  const out = [c.bold(`Rule ${r.rule}`) + `: ${verdict(c, r)}`];
  out.push("  select" + (r.filters.length === 0 ? ": (none: every instance of the workflow)" : ""));
  out.push(
    ...pad(
      r.filters.map((f) => [
        `${mark(c, f.result)} ${f.key} = ${showWritten(f.value)}${f.resolved !== undefined ? ` (${showWritten(f.resolved)})` : ""}`,
        c.dim(f.actual),
      ]),
      "    ",
    ),
  );
  if (r.fields.length > 0) {
    out.push("  fields");
    const field = (f: RuleExplanation["fields"][number]): string => {
      const name = names.field(r.workflow_id ?? undefined, f.action);
      return `${f.alias} (${f.step}:${f.action}${name !== undefined ? ` ${JSON.stringify(name)}` : ""})`;
    };
    out.push(
      ...pad(
        r.fields.map((f) => [field(f), `= ${show(f.value)}`]),
        "    ",
      ),
    );
  }
  if (r.waiting && r.waiting.length > 0) {
    out.push("  waiting");
    const step = (w: NonNullable<RuleExplanation["waiting"]>[number]): string =>
      w.step === null ? "(first active step)" : JSON.stringify(w.step);
    const value = (w: NonNullable<RuleExplanation["waiting"]>[number]): string =>
      w.since === undefined || w.days === undefined || w.hours === undefined
        ? "not active: no waiting time"
        : `since ${w.since} = ${w.days.toFixed(2)} days (${w.hours.toFixed(1)} hours)`;
    out.push(
      ...pad(
        r.waiting.map((w) => [step(w), value(w)]),
        "    ",
      ),
    );
  }
  if (r.when) {
    out.push("  when");
    out.push(...clauseLines(c, r.when, "    "));
  } else {
    out.push("  when: (none: every selected instance matches)");
  }
  if (r.error) out.push(`  ${c.red(r.error)}`);
  if (r.matched) {
    if (r.changes.length > 0) {
      out.push("  changes");
      for (const ch of r.changes) out.push(...changeLines(ch, "    ", names));
    }
    for (const s of r.skipped) out.push(`  skipped ${s}`);
    for (const rep of r.reports)
      out.push(
        `  report ${JSON.stringify(rep.title)}: counts under ${rep.group_by} ${rep.keys.map((k) => JSON.stringify(k)).join(", ")}`,
      );
  }
  return out;
}

export function explainText(e: Explanation, color: boolean): string {
  const c = pc.createColors(color);
  const i = e.instance;
  // names beside ids, from the instance's snapshot (src/plan/names.ts reads them as it reads a plan's)
  const names = planNames({
    rules: e.rules.map((r) => ({
      name: r.rule,
      workflow_id: r.workflow_id,
      ...(r.aliases ? { fields: r.aliases } : {}),
    })),
    ...(e.names ? { names: e.names } : {}),
  });
  const steps = i.active_step_ids.map((s) => stepWithName(names, i.process_id, s)).join(", ");
  const out = [
    c.bold(`Instance ${i.id} ${JSON.stringify(i.name)}`) +
      ` — ${workflowLabel(names, i.process_id)}, ${i.status}, active steps: ${steps || "none"}, tags: ${i.tags.join(", ") || "none"}`,
    c.dim(`explained at ${e.now}${e.base_url ? ` against ${serviceName(e.base_url, e.profile)}` : ""}`),
  ];
  for (const r of e.rules) out.push("", ...ruleLines(c, r, names));
  if (e.rules.length === 0) out.push("", `No loaded rule acts on workflow ${i.process_id}.`);
  if (e.other_rules.length > 0) {
    out.push("", c.dim(`Not for this workflow: ${e.other_rules.map((o) => `${o.rule} (${o.workflow})`).join(", ")}`));
  }
  return terminalSafe(`${out.join("\n")}\n`, color);
}
