/**
 * Compiles one rule of a parsed file. It runs even when the schema found errors in the rule (so a file's JSONata and
 * alias mistakes are all reported in one go), but checks that would only echo a schema error are skipped. The keys
 * the schema passed are read typed by it (`RuleInput`, ./schema.ts); only the rule's name (for messages), its alias
 * names and its action entries are read as written, so that their checks run even beside a schema error.
 */
import type { CompiledAction, CompiledRule, Diagnostic, FieldRef, SelectSpec, WorkflowRef } from "./types.js";
import { defined } from "../model/defined.js";
import type { SourceFile } from "./positions.js";
import { posOfKey, scalarIndexToPos } from "./positions.js";
import { compileJsonata } from "./jsonata-compile.js";
import { checkExpr } from "./expr-checks.js";
import { compileAction } from "./compile-actions.js";
import { computeNeeds } from "./needs.js";
import { clip } from "./messages.js";
import { posIn, report, type RuleContext } from "./compile-context.js";
import { isRecord } from "../model/guards.js";
import { actionKind } from "../actions/index.js";
import { compileOperations } from "./operations.js";
import { exprStepRef, fieldRef, stepRef } from "./structure-refs.js";
import type { RuleInput } from "./schema.js";

/** Aliases are read as `fields.<alias>` in JSONata, so they must be plain identifiers. */
export const ALIAS_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;


/** The rule's keys the schema did not report: they hold the shape it describes. */
function passed(raw: Record<string, unknown>, badKeys: ReadonlySet<string>): Partial<RuleInput> {
  return Object.fromEntries(Object.entries(raw).filter(([k]) => !badKeys.has(k))) as Partial<RuleInput>;
}

function fieldRefs(fields: RuleInput["fields"], ctx: RuleContext): Record<string, FieldRef> {
  const out: Record<string, FieldRef> = {};
  for (const [alias, v] of Object.entries(fields ?? {})) {
    const step = stepRef(ctx, v.step, ["fields", alias, "step"], `fields.${alias}.step`);
    const action = step === undefined ? undefined : fieldRef(ctx, v.action, ["fields", alias, "action"], `fields.${alias}.action`, step);
    if (step !== undefined && action !== undefined) out[alias] = { step, action };
  }
  return out;
}

function selectSpec(select: RuleInput["select"], ctx: RuleContext): SelectSpec {
  const out: SelectSpec = {};
  for (const [k, v] of Object.entries(select ?? {})) {
    // a step named in the selection stands as its key until the workflow's structure resolves it
    const step = k === "active_step_id" ? stepRef(ctx, v, ["select", k], `select.${k}`) : undefined;
    if (step !== undefined && step < 0) out[k] = step;
    else if (Array.isArray(v)) out[k] = [...v];
    else if (v !== undefined) out[k] = v;
  }
  return out;
}

export interface RuleCompileResult {
  rule?: CompiledRule;
  diagnostics: Diagnostic[];
}

/** `badKeys` are the rule's top-level keys the schema already reported ("" for the rule itself). */
export function compileRule(src: SourceFile, index: number, raw: unknown, badKeys: ReadonlySet<string>): RuleCompileResult {
  if (!isRecord(raw)) return { diagnostics: [] };
  const r = passed(raw, badKeys);
  const name = typeof raw.name === "string" && raw.name !== "" ? raw.name : undefined;
  const rawFields = raw.fields;
  const fieldsUsable = rawFields === undefined || rawFields === null || isRecord(rawFields);
  const ctx: RuleContext = {
    src,
    path: ["rules", String(index)],
    name,
    label: name !== undefined ? `rule "${clip(name)}"` : `rules[${index}]`,
    aliases: fieldsUsable ? Object.keys(isRecord(rawFields) ? rawFields : {}) : undefined,
    diagnostics: [],
    refs: [],
    structure: [],
  };

  if (isRecord(rawFields)) {
    for (const alias of Object.keys(rawFields)) {
      if (ALIAS_RE.test(alias)) continue;
      report(
        ctx,
        "error",
        "alias",
        posOfKey(src, [...ctx.path, "fields"], alias),
        `field alias "${alias}" in ${ctx.label} must be an identifier (letters, digits and _, not starting with a ` +
          `digit) so that JSONata can read it as fields.${alias.replace(/[^A-Za-z0-9_]/g, "_")}`,
      );
    }
  }

  let when: CompiledRule["when"];
  if (r.when !== undefined && r.when.trim() !== "") {
    const at = scalarIndexToPos(src, [...ctx.path, "when"]);
    const where = `"when" of ${ctx.label}`;
    const c = compileJsonata(r.when, at, where, name);
    if (c.ok) {
      when = c.expr;
      const checked = checkExpr({ expr: c.expr, at, where, rule: name, aliases: ctx.aliases });
      ctx.diagnostics.push(...checked.diagnostics);
      ctx.refs.push(checked.refs);
      for (const st of checked.steps) exprStepRef(ctx, st);
    } else {
      ctx.diagnostics.push(c.diagnostic);
    }
  }

  const actions: CompiledAction[] = [];
  let actionsOk = Array.isArray(raw.actions);
  if (Array.isArray(raw.actions)) {
    raw.actions.forEach((item: unknown, j) => {
      const a = compileAction(item, j, ctx);
      if (a) actions.push(a);
      else actionsOk = false;
    });
  }

  const ops = compileOperations(ctx, r);

  const recordKeys = actions.flatMap((a) => actionKind(a.kind).recordKeys(a));
  const needs = computeNeeds(ctx.aliases ?? [], ctx.refs, recordKeys);

  // an instance's changes go together: a limit below them could never let one through
  const rollout = r.limits?.max_changes_per_run;
  const perInstance = actions.filter((a) => actionKind(a.kind).mutating).length;
  if (rollout !== undefined && perInstance > rollout) {
    report(ctx, "error", "limit", posIn(ctx, "limits", "max_changes_per_run"), `limits.max_changes_per_run: ${rollout} of ${ctx.label} is below the ${perInstance} changes it plans for one instance, which go together; allow at least ${perInstance}`);
  }

  const failed = badKeys.size > 0 || !actionsOk || ctx.diagnostics.some((d) => d.severity === "error");
  if (failed || name === undefined) return { diagnostics: ctx.diagnostics };

  // the schema passed every key: the rule has the shape it describes
  if (r.workflow === undefined) return { diagnostics: ctx.diagnostics };
  const refOf = (w: number | { name: string }): WorkflowRef => (typeof w === "number" ? { id: w } : { name: w.name });
  const workflows: CompiledRule["workflows"] = r.workflow === "*" ? "*" : Array.isArray(r.workflow) ? r.workflow.map(refOf) : undefined;
  // a rule over several workflows keeps the first as `workflow`; "*" stands as a name no workflow has until resolved
  const first = r.workflow === "*" ? undefined : Array.isArray(r.workflow) ? r.workflow[0] : r.workflow;
  const workflow: WorkflowRef = first === undefined ? { name: "*" } : refOf(first);
  const limits: CompiledRule["limits"] = {
    ...defined({ max_instances: r.limits?.max_instances, max_changes_per_run: r.limits?.max_changes_per_run }),
  };

  const rule: CompiledRule = {
    name,
    ...(r.description !== undefined ? { description: r.description } : {}),
    pos: posIn(ctx),
    workflow,
    ...(workflows !== undefined ? { workflows } : {}),
    fields: fieldRefs(r.fields, ctx),
    select: selectSpec(r.select, ctx),
    ...(when ? { when } : {}),
    actions,
    limits,
    needs,
    ...(ops.mode === "audit" ? { mode: ops.mode } : {}),
    ...defined({ exclude: ops.exclude, active: ops.active }),
    structure: ctx.structure,
  };
  return { rule, diagnostics: ctx.diagnostics };
}
