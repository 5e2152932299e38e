/**
 * Random edits of a rule file between two runs, as pull requests make them (docs/operating.md, "State between runs"): a `when`, an
 * action's template, limits, a name, a description, the mode, a `select` filter, a newly referenced field, a rule
 * dropped or brought back. Each edit is a pure function of the rule file's YAML and a number; an edit that leaves
 * the rules invalid (two rules acting on one step, say) is skipped, as a pull request that fails validation is.
 */
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { compileSources } from "../../src/rules/index.js";
import type { RuleSet } from "../../src/rules/types.js";

export const EDIT_KINDS = [
  "when",
  "action",
  "limits",
  "name",
  "description",
  "mode",
  "select",
  "field",
  "drop",
  "restore",
] as const;
export type EditKind = (typeof EDIT_KINDS)[number];
export interface Edit {
  kind: EditKind;
  /** which rule (modulo their number) and what value (the edit's own use) */
  n: number;
}

export const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom(...EDIT_KINDS),
  n: fc.integer({ min: 0, max: 10_000 }),
});

type Rule = Record<string, unknown> & {
  name: string;
  select?: Record<string, unknown>;
  fields?: Record<string, unknown>;
};
type File = { version: number; rules: Rule[] };

/** A form field of each demo workflow that the fixture's rules do not read, to be referenced anew. */
const NEW_FIELDS: Record<string, { step: number; action: number }> = {
  "1042": { step: 20110, action: 50220 },
  "1043": { step: 20120, action: 50251 },
  "1044": { step: 20130, action: 50262 },
  "1045": { step: 20141, action: 50272 },
};

function workflowKey(rule: Rule): string {
  return typeof rule.workflow === "number" ? String(rule.workflow) : "1043"; // the fixture names only onboarding
}

/** Changes one rule of the file; returns false when the edit does not apply to it. */
function applyEdit(file: File, original: File, e: Edit): boolean {
  const rules = file.rules;
  const rule = rules[e.n % rules.length] as Rule;
  const actions = Array.isArray(rule.actions) ? (rule.actions as unknown[]) : [];
  switch (e.kind) {
    case "when":
      rule.when =
        typeof rule.when === "string" && /\d+/.test(rule.when)
          ? rule.when.replace(/\d+/, String(e.n % 200))
          : `$count(tags) >= ${e.n % 3}`;
      return true;
    case "action": {
      const text = JSON.stringify(actions);
      if (/"report"/.test(text)) {
        const report = actions.find(
          (a): a is { report: Record<string, unknown> } => typeof a === "object" && a !== null && "report" in a,
        );
        if (!report) return false;
        report.report.group_by = ["tags", "status", "priority", "stage"][e.n % 4];
        return true;
      }
      if (!/inputValue|date/.test(text)) return false;
      rule.actions = JSON.parse(
        text.replace(/(\{\{[^}]*\}\}|Approved|large order|tiny)/, `$1 (edit ${e.n % 7})`),
      ) as unknown[];
      return true;
    }
    case "limits":
      rule.limits = { max_instances: 20 + (e.n % 300) };
      return true;
    case "name":
      rule.name = `${rule.name.replace(/-r\d+$/, "")}-r${e.n}`;
      return true;
    case "description":
      rule.description = `edited ${e.n}`;
      return true;
    case "mode":
      rule.mode = rule.mode === "audit" ? "enforce" : "audit";
      return true;
    case "select": {
      const select = { ...(rule.select ?? {}) };
      const relative = Object.keys(select).filter(
        (k) => typeof select[k] === "string" && /^[+-]P\d+D$/.test(select[k] as string),
      );
      const choice = e.n % 3;
      if (choice === 0 && relative.length > 0) {
        const k = relative[e.n % relative.length] as string;
        select[k] = (select[k] as string).replace(/\d+/, String(1 + (e.n % 90)));
      } else if (choice === 1) {
        if (select.priority === undefined) select.priority = e.n % 2 === 0 ? "H" : "V";
        else delete select.priority;
      } else {
        const tags = Array.isArray(select.tags)
          ? (select.tags as string[])
          : typeof select.tags === "string"
            ? [select.tags]
            : [];
        select.tags = tags.length > 1 ? tags.slice(1) : [...tags, ["urgent", "travel", "q4"][e.n % 3] as string];
      }
      rule.select = select;
      return true;
    }
    case "field": {
      const field = NEW_FIELDS[workflowKey(rule)];
      if (!field || (rule.fields && "extra" in rule.fields)) return false;
      rule.fields = { ...(rule.fields ?? {}), extra: field };
      const report = actions.find(
        (a): a is { report: { columns?: string[] } } => typeof a === "object" && a !== null && "report" in a,
      );
      if (report) report.report.columns = [...(report.report.columns ?? ["id"]), "fields.extra"];
      else rule.when = `${typeof rule.when === "string" ? `(${rule.when}) and ` : ""}$not(fields.extra = "never")`;
      return true;
    }
    case "drop":
      if (rules.length <= 3) return false;
      rules.splice(e.n % rules.length, 1);
      return true;
    case "restore": {
      const missing = original.rules.filter((o) => !rules.some((r) => r.name.replace(/-r\d+$/, "") === o.name));
      if (missing.length === 0) return false;
      rules.push(structuredClone(missing[e.n % missing.length] as Rule));
      return true;
    }
  }
}

/** The rule file after the edits that keep it valid, and the rules it compiles to. */
export function editRules(text: string, original: string, edits: readonly Edit[]): { text: string; ruleSet: RuleSet } {
  let current = text;
  let ruleSet = compile(current);
  if (!ruleSet) throw new Error("the rules to edit do not load");
  const base = parse(original) as File;
  for (const e of edits) {
    const file = parse(current) as File;
    if (!applyEdit(file, base, e)) continue;
    const next = stringify(file);
    const compiled = compile(next);
    if (!compiled) continue; // invalid after this edit: skipped, as CI would refuse it
    current = next;
    ruleSet = compiled;
  }
  return { text: current, ruleSet };
}

function compile(text: string): RuleSet | undefined {
  return compileSources([{ file: "edited.yaml", text }]).ruleSet;
}
