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

/** A rule's select.status as a key: sorted values, or "*" when it selects any status. */
function statusKey(r: CompiledRule): string {
  const s = r.select.status;
  return s === undefined ? "*" : [...new Set((Array.isArray(s) ? s : [s]).map(String))].sort().join(",");
}

/** Selects whose statuses share none can never hand both rules the same instance. */
function mayMeet(ka: string, kb: string): boolean {
  if (ka === "*" || kb === "*" || ka === kb) return true;
  const sb = kb.split(",");
  return ka.split(",").some((x) => sb.includes(x));
}

interface Entry {
  rule: CompiledRule;
  action: CompiledAction;
  /** position in the order actions were added: the earliest entry is the one a warning names */
  order: number;
}

/** Actions of one bucket with one status key: how many, and the earliest (named in the warning). */
interface Group {
  first: Entry;
  count: number;
}

type ByStatus = Map<string, Group>;

/** The actions seen so far of one workflow, by what they act on. */
interface WorkflowIndex {
  /** by step */
  steps: Map<number, ByStatus>;
  /** every step action, whatever its step: what a whole-instance action meets */
  anyStep: ByStatus;
  /** whole-instance actions by kind (two of one kind agree) */
  instance: Map<string, ByStatus>;
}

/**
 * The actions added so far, bucketed by (workflow, target, select.status): a new action is compared with a few
 * buckets, never with every earlier action, so checking n rules costs about n bucket look-ups (3 × 700
 * rules on one step took 43.6 s and 2.39 GB pairwise). Each action gets at most one warning, naming the earliest
 * action it may meet and how many more it may meet.
 */
class ConflictIndex {
  private readonly workflows = new Map<string, WorkflowIndex>();
  private added = 0;
  /** buckets looked at, for tests: linear in the number of actions, whatever the rules share */
  comparisons = 0;

  private workflow(key: string): WorkflowIndex {
    let w = this.workflows.get(key);
    if (!w) {
      w = { steps: new Map(), anyStep: new Map(), instance: new Map() };
      this.workflows.set(key, w);
    }
    return w;
  }

  /** The earliest action added before that `action` may meet, and how many it may meet. */
  meets(workflow: string, status: string, action: CompiledAction): { first: Entry; count: number } | undefined {
    const target = targetOf(action);
    if (target === undefined) return undefined;
    const w = this.workflows.get(workflow);
    if (!w) return undefined;
    const buckets: ByStatus[] = [];
    if (target === "instance") {
      buckets.push(w.anyStep);
      for (const [kind, b] of w.instance) if (kind !== action.kind) buckets.push(b);
    } else {
      const same = w.steps.get(target.step);
      if (same) buckets.push(same);
      for (const b of w.instance.values()) buckets.push(b);
    }
    let first: Entry | undefined;
    let count = 0;
    for (const bucket of buckets) {
      for (const [key, group] of bucket) {
        this.comparisons++;
        if (!mayMeet(key, status)) continue;
        count += group.count;
        if (!first || group.first.order < first.order) first = group.first;
      }
    }
    return first ? { first, count } : undefined;
  }

  add(workflow: string, status: string, rule: CompiledRule, action: CompiledAction): void {
    const target = targetOf(action);
    if (target === undefined) return;
    const w = this.workflow(workflow);
    const entry: Entry = { rule, action, order: this.added++ };
    const into = (bucket: ByStatus): void => {
      const g = bucket.get(status);
      if (g) g.count++;
      else bucket.set(status, { first: entry, count: 1 });
    };
    if (target === "instance") {
      let b = w.instance.get(action.kind);
      if (!b) w.instance.set(action.kind, (b = new Map()));
      into(b);
    } else {
      let b = w.steps.get(target.step);
      if (!b) w.steps.set(target.step, (b = new Map()));
      into(b);
      into(w.anyStep);
    }
  }
}

/** " (and 3 more earlier actions)" when an action may meet more than the one its warning names. */
function andMore(count: number): string {
  const more = count - 1;
  return more > 0 ? ` (and ${more} more earlier ${more === 1 ? "action" : "actions"})` : "";
}

/** Warnings for actions that may meet on one instance, and the number of bucket comparisons it took. */
export function conflictChecks(rules: readonly CompiledRule[]): { diagnostics: Diagnostic[]; comparisons: number } {
  const out: Diagnostic[] = [];
  const across = new ConflictIndex();
  let comparisons = 0;
  for (const r of rules) {
    const wf = workflowKey(r);
    const status = statusKey(r);
    // within one rule: two actions on the same step, or an abort next to a step action
    const within = new ConflictIndex();
    for (const b of r.actions) {
      const met = within.meets("", "*", b);
      const why = met ? clash(met.first.action, b) : undefined;
      if (met && why) out.push(warn(b.pos, r.name, "conflict", `two actions of rule "${r.name}" may conflict: ${why}${andMore(met.count)}`));
      within.add("", "*", r, b);
    }
    comparisons += within.comparisons;
    for (const b of r.actions) {
      const met = across.meets(wf, status, b);
      const why = met ? clash(met.first.action, b) : undefined;
      if (!met || !why) continue;
      const q = met.first.rule;
      out.push(
        warn(
          b.pos,
          r.name,
          "conflict",
          `rules "${q.name}" (${at(met.first.action.pos)}) and "${r.name}" may conflict on ${workflowLabel(r)}: ${why}${andMore(met.count)}; an ` +
            "instance matched by both is reported as a conflict at plan time",
        ),
      );
    }
    // added after its own actions were checked: a rule's actions meet each other in the check above
    for (const b of r.actions) across.add(wf, status, r, b);
  }
  return { diagnostics: out, comparisons: comparisons + across.comparisons };
}

export function possibleConflicts(rules: readonly CompiledRule[]): Diagnostic[] {
  return conflictChecks(rules).diagnostics;
}

export function setChecks(rules: readonly CompiledRule[]): Diagnostic[] {
  // appended one by one: spreading a list of tens of thousands into push() overflows the stack
  const out: Diagnostic[] = [];
  for (const r of rules) for (const d of selectContradictions(r)) out.push(d);
  for (const r of rules) for (const d of processMismatch(r)) out.push(d);
  for (const d of possibleConflicts(rules)) out.push(d);
  return out;
}
