/**
 * One rule against one instance, with the reasons: each `select` filter checked on the record, the fields the rule
 * reads, `when` and its clauses, and what the rule would plan (through the same evaluateInstance the planner uses, so
 * an explanation can never disagree with a plan).
 */
import type { CompiledRule } from "../../rules/types.js";
import { buildContext, instanceBindings, planBindings, type Bindings } from "../context.js";
import { waitingSinceMs } from "../waiting.js";
import { exprRefs } from "../../rules/ast-refs.js";
import { evaluateInstance } from "../evaluate-instance.js";
import { fieldKey, plainValue } from "../../model/field-values.js";
import type { InstanceData } from "../../actions/instance.js";
import { actionKind, ReportEntries } from "../../actions/index.js";
import { explainWhen } from "./clauses.js";
import { checkFilters, selectionResult } from "./filters.js";
import type { FieldExplanation, ReportExplanation, RuleExplanation, WaitingExplanation } from "./types.js";
import { exclusionReason, exclusionsOf } from "../exclusions.js";
import { inactiveRules } from "../active-rules.js";
import { aliasesShown } from "../names.js";

export interface ExplainOptions {
  now: Date;
  /** the rule's workflow id, resolved (a rule naming its workflow by name needs GET /processes/ first) */
  workflowId: number | null;
  bindings?: Bindings;
  /** the opt-out tag in effect (undefined: off) */
  optOutTag?: string;
}

function fieldsRead(rule: CompiledRule, data: InstanceData): FieldExplanation[] {
  return rule.needs.fields.flatMap((alias) => {
    const ref = rule.fields[alias];
    if (!ref) return [];
    const value = plainValue(data.values.get(fieldKey(ref.step, ref.action)));
    return [
      {
        alias,
        step: ref.step,
        action: ref.action,
        present: value !== undefined,
        ...(value !== undefined ? { value } : {}),
      },
    ];
  });
}

/** The waiting time of every step the rule's `when` names in a waiting helper (once each). */
function waitingShown(rule: CompiledRule, data: InstanceData, now: Date): WaitingExplanation[] {
  if (!rule.needs.times || !rule.when) return [];
  const steps = new Map<string, string | number | null>();
  for (const w of exprRefs(rule.when.expr).waiting) {
    if (w.step === null) continue;
    const step = w.step?.written ?? null;
    steps.set(JSON.stringify(step), step);
  }
  return [...steps.values()].map((step) => {
    let ms: number | undefined;
    try {
      ms = waitingSinceMs(rule, data, step ?? undefined);
    } catch {
      ms = undefined; // the evaluation error itself is shown with the rule
    }
    if (ms === undefined) return { step };
    const waited = now.getTime() - ms;
    return { step, since: new Date(ms).toISOString(), days: waited / 86_400_000, hours: waited / 3_600_000 };
  });
}

export async function explainRule(
  rule: CompiledRule,
  data: InstanceData,
  opts: ExplainOptions,
): Promise<RuleExplanation> {
  const out: RuleExplanation = {
    rule: rule.name,
    workflow_id: opts.workflowId,
    in_workflow: opts.workflowId === data.process_id,
    filters: [],
    selected: "fail",
    fields: [],
    matched: false,
    changes: [],
    skipped: [],
    reports: [],
  };
  if (!out.in_workflow) return out;
  const bindings = opts.bindings ?? planBindings(opts.now);
  const nowIso = opts.now.toISOString();
  out.filters = checkFilters(rule.select, data, opts.now);
  out.selected = selectionResult(out.filters);
  out.fields = fieldsRead(rule, data);
  const waiting = waitingShown(rule, data, opts.now);
  if (waiting.length > 0) out.waiting = waiting;
  if (rule.when)
    out.when = await explainWhen(
      rule.when,
      buildContext(rule, data, nowIso),
      instanceBindings(rule, data, bindings, nowIso),
    );

  const excluded = exclusionReason(exclusionsOf(rule, opts.optOutTag), data.id, data.record?.tags ?? []);
  if (excluded) out.excluded = `excluded: ${excluded}`;
  const inactive = inactiveRules([rule], opts.now).get(rule.name);
  if (inactive) out.inactive = inactive.reason;

  const outcome = await evaluateInstance(rule, data, nowIso, bindings);
  if (outcome.error) out.error = outcome.error.message;
  // an excluded instance, or a rule out of its window, never matches: the plan would not touch the instance
  out.matched = out.selected !== "fail" && outcome.matched && !outcome.error && !excluded && !inactive;
  if (!out.matched) return out;
  out.changes = outcome.changes;
  const aliases = aliasesShown({ name: rule.name, workflowId: opts.workflowId, fields: rule.fields }, outcome.changes);
  if (aliases) out.aliases = aliases;
  out.skipped = outcome.skipped;
  out.reports = outcome.reportEntries.flatMap(({ actionIndex, entry }): ReportExplanation[] => {
    const action = rule.actions[actionIndex];
    const kind = action ? actionKind(action.kind) : undefined;
    if (!action || !kind || kind.mutating) return [];
    // the report of this one instance, built as the plan builds it, names its title and key
    const { title, group_by } = kind.build({ name: rule.name, fields: rule.fields }, action, ReportEntries.of([entry]));
    return [{ title, group_by, keys: entry.keys, row: entry.row }];
  });
  return out;
}
