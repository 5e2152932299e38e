/** Checks across rules: unique names, and actions a rule's own select rules out or that other rules may contest. */
import { actionKind, type ChangeTarget } from "../actions/index.js";
import type { CompiledAction, CompiledRule, Diagnostic, SourcePos } from "./types.js";

export interface NamedAt {
  name: string;
  pos: SourcePos;
}

function at(p: SourcePos): string {
  return `${p.file}:${p.line}:${p.col}`;
}

export function duplicateNames(names: readonly NamedAt[]): Diagnostic[] {
  const first = new Map<string, SourcePos>();
  const out: Diagnostic[] = [];
  for (const n of names) {
    const prev = first.get(n.name);
    if (prev) {
      out.push({
        ...n.pos,
        severity: "error",
        code: "duplicate-name",
        message: `duplicate rule name "${n.name}": also defined at ${at(prev)} (names must be unique across all loaded files)`,
        rule: n.name,
      });
    } else {
      first.set(n.name, n.pos);
    }
  }
  return out;
}

/** What a mutating action acts on (a step, or the whole instance); undefined for a report. */
function targetOf(a: CompiledAction): ChangeTarget | undefined {
  const kind = actionKind(a.kind);
  return kind.mutating ? kind.target(a) : undefined;
}

/** "completes step 20111", "aborts instances" */
function phrase(a: CompiledAction): string {
  const kind = actionKind(a.kind);
  return kind.mutating ? kind.phrase(a) : "reports";
}

function warn(pos: SourcePos, rule: string, code: string, message: string): Diagnostic {
  return { ...pos, severity: "warning", code, message, rule };
}

/** A step as the rule writes it: its id, or its name (quoted) while the name stands as a key. */
function stepText(rule: CompiledRule, step: string | number | boolean): string {
  if (typeof step !== "number" || step >= 0) return String(step);
  const ref = rule.structure?.find((r) => r.kind === "step" && r.key === step);
  return ref ? JSON.stringify(ref.written) : "a named step";
}

/** A step action or abort that the rule's own select can never leave applicable. */
export function selectContradictions(rule: CompiledRule): Diagnostic[] {
  const out: Diagnostic[] = [];
  const status = rule.select.status;
  const statuses = status === undefined ? undefined : (Array.isArray(status) ? status : [status]).map(String);
  const active = rule.select.active_step_id;
  for (const a of rule.actions) {
    const target = targetOf(a);
    if (target === undefined) continue;
    if (statuses && !statuses.includes("running")) {
      out.push(
        warn(
          a.pos,
          rule.name,
          "select-excludes",
          `rule "${rule.name}" ${phrase(a)}, but its select.status (${statuses.join(", ")}) only selects ` +
            `instances that are not running, where ${target === "instance" ? "there is nothing to change" : "no step is active"}`,
        ),
      );
      continue;
    }
    // a step named on one side and numbered on the other cannot be compared before the workflow resolves the name
    const named = (typeof active === "number" && active < 0) || (target !== "instance" && target.step < 0);
    const comparable = !named || (typeof active === "number" && active < 0 && target !== "instance" && target.step < 0);
    if (target !== "instance" && comparable && active !== undefined && !Array.isArray(active) && String(active) !== String(target.step)) {
      out.push(
        warn(
          a.pos,
          rule.name,
          "select-excludes",
          `rule "${rule.name}" ${phrase(a)}, but its select.active_step_id is ${stepText(rule, active)}: the ` +
            `selected instances have step ${stepText(rule, active)} active, so step ${stepText(rule, target.step)} may well not be`,
        ),
      );
    }
  }
  return out;
}

/** `select.process` naming another workflow than the rule's own: the list is that workflow's, so nothing matches. */
export function processMismatch(rule: CompiledRule): Diagnostic[] {
  const p = rule.select.process;
  if (p === undefined || !("id" in rule.workflow) || String(p) === String(rule.workflow.id)) return [];
  return [
    warn(
      rule.pos,
      rule.name,
      "select-excludes",
      `rule "${rule.name}" lists instances of workflow ${rule.workflow.id}, but its select.process is ${String(p)}: ` +
        "no instance can match; drop select.process (the workflow is already in the request path)",
    ),
  ];
}

function workflowKey(r: CompiledRule): string {
  return "id" in r.workflow ? `id:${r.workflow.id}` : `name:${r.workflow.name}`;
}

function workflowLabel(r: CompiledRule): string {
  return "id" in r.workflow ? `workflow ${r.workflow.id}` : `workflow "${r.workflow.name}"`;
}

/** Two mutations that may meet on one instance. Only a warning: conflicts are judged per instance at plan time. */
function clash(a: CompiledAction, b: CompiledAction): string | undefined {
  const ta = targetOf(a);
  const tb = targetOf(b);
  if (ta === undefined || tb === undefined) return undefined;
  if (ta !== "instance" && tb !== "instance") return ta.step === tb.step ? `both act on step ${ta.step}` : undefined;
  if (ta === "instance" && tb !== "instance") return `one ${phrase(a)} in which the other ${phrase(b)}`;
  if (tb === "instance" && ta !== "instance") return `one ${phrase(b)} in which the other ${phrase(a)}`;
  // two whole-instance actions of one kind agree (an instance aborted by two rules is aborted once)
  return a.kind === b.kind ? undefined : `one ${phrase(a)} and the other ${phrase(b)}`;
}

function statuses(r: CompiledRule): string[] | undefined {
  const s = r.select.status;
  return s === undefined ? undefined : (Array.isArray(s) ? s : [s]).map(String);
}

/** Selects whose statuses share none can never hand both rules the same instance. */
function disjoint(a: CompiledRule, b: CompiledRule): boolean {
  const sa = statuses(a);
  const sb = statuses(b);
  return sa !== undefined && sb !== undefined && !sa.some((x) => sb.includes(x));
}

export function possibleConflicts(rules: readonly CompiledRule[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  rules.forEach((r, i) => {
    // within one rule: two actions on the same step, or an abort next to a step action
    r.actions.forEach((a, j) => {
      for (const b of r.actions.slice(j + 1)) {
        const why = clash(a, b);
        if (why) {
          out.push(warn(b.pos, r.name, "conflict", `two actions of rule "${r.name}" may conflict: ${why}`));
        }
      }
    });
    for (const q of rules.slice(0, i)) {
      if (workflowKey(q) !== workflowKey(r) || disjoint(q, r)) continue;
      for (const a of q.actions) {
        for (const b of r.actions) {
          const why = clash(a, b);
          if (!why) continue;
          out.push(
            warn(
              b.pos,
              r.name,
              "conflict",
              `rules "${q.name}" (${at(a.pos)}) and "${r.name}" may conflict on ${workflowLabel(r)}: ${why}; an ` +
                "instance matched by both is reported as a conflict at plan time",
            ),
          );
        }
      }
    }
  });
  return out;
}

export function setChecks(rules: readonly CompiledRule[]): Diagnostic[] {
  return [...rules.flatMap(selectContradictions), ...rules.flatMap(processMismatch), ...possibleConflicts(rules)];
}
