/** Checks across rules: unique names, and actions a rule's own select rules out or that other rules may contest. */
import { actionKind, type ChangeTarget } from "../actions/index.js";
import type { CompiledAction, CompiledRule, Diagnostic, SourcePos, WorkflowRef } from "./types.js";

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

const refKey = (w: WorkflowRef): string => ("id" in w ? `id:${w.id}` : `name:${w.name}`);
const refLabel = (w: WorkflowRef): string => ("id" in w ? `workflow ${w.id}` : `workflow "${w.name}"`);

/**
 * Where a rule's actions may meet others' (docs/writing-rules.md, "One rule over several workflows"): each workflow it names, or,
 * for `workflow: "*"`, every workflow there is.
 */
type Scope = { star: true } | { star: false; workflows: WorkflowRef[] };

function scopeOf(r: CompiledRule): Scope {
  if (r.workflows === "*") return { star: true };
  const all = r.workflows ?? [r.workflow];
  const seen = new Set<string>();
  return { star: false, workflows: all.filter((w) => !seen.has(refKey(w)) && seen.add(refKey(w))) };
}

/** `workflow 1042`, `workflow 1042 or 1043`, `any workflow` */
function scopeLabel(s: Scope): string {
  if (s.star) return "any workflow";
  const ids = s.workflows.map((w) => ("id" in w ? String(w.id) : JSON.stringify(w.name)));
  return ids.length === 1 ? refLabel(s.workflows[0] ?? { name: "" }) : `workflow ${ids.slice(0, -1).join(", ")} or ${ids.at(-1) ?? ""}`;
}

/** A step as an action names it: `20111`, or `"Manager approval"` (a name's key is no id). */
function stepWords(a: CompiledAction, step: number): string {
  return "stepName" in a && typeof a.stepName === "string" ? JSON.stringify(a.stepName) : String(step);
}

/** Two mutations that may meet on one instance. Only a warning: conflicts are judged per instance at plan time. */
function clash(a: CompiledAction, b: CompiledAction): string | undefined {
  const ta = targetOf(a);
  const tb = targetOf(b);
  if (ta === undefined || tb === undefined) return undefined;
  if (ta !== "instance" && tb !== "instance") return ta.step === tb.step ? `both act on step ${stepWords(b, ta.step)}` : undefined;
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
  /** where the rule's actions may meet others' */
  scope: Scope;
}

/**
 * Actions of one bucket with one status key: how many, the earliest (named in the warning), and those of rules over
 * several workflows, which a look-up over several workflows meets more than once and counts once.
 */
interface Group {
  first: Entry;
  count: number;
  several: Entry[];
}

type ByStatus = Map<string, Group>;

/** The actions seen so far of one workflow, by what they act on. */
interface WorkflowIndex {
  /** `workflow 1042`: where two actions met, for the warning */
  label: string | undefined;
  /** by step */
  steps: Map<number, ByStatus>;
  /** every step action, whatever its step: what a whole-instance action meets */
  anyStep: ByStatus;
  /** whole-instance actions by kind (two of one kind agree) */
  instance: Map<string, ByStatus>;
}

const newIndex = (label: string | undefined): WorkflowIndex => ({
  label,
  steps: new Map(),
  anyStep: new Map(),
  instance: new Map(),
});

/**
 * The actions added so far, bucketed by (workflow, target, select.status): a new action is compared with a few
 * buckets, never with every earlier action, so checking n rules costs about n bucket look-ups (3 × 700
 * rules on one step took 43.6 s and 2.39 GB pairwise). Each action gets at most one warning, naming the earliest
 * action it may meet and how many more it may meet. A rule over several workflows is in the index of each; one over
 * `"*"` in an index of its own that every look-up reads, and its own look-ups read the index of every action.
 */
class ConflictIndex {
  private readonly workflows = new Map<string, WorkflowIndex>();
  /** actions of rules over `"*"`: they may meet any rule */
  private readonly star = newIndex(undefined);
  /** every action, whatever its workflow: what an action of a rule over `"*"` may meet */
  private readonly all = newIndex(undefined);
  private added = 0;
  /** buckets looked at, for tests: linear in the number of actions, whatever the rules share */
  comparisons = 0;

  private workflow(w: WorkflowRef): WorkflowIndex {
    const key = refKey(w);
    let i = this.workflows.get(key);
    if (!i) {
      i = newIndex(refLabel(w));
      this.workflows.set(key, i);
    }
    return i;
  }

  private static buckets(w: WorkflowIndex, action: CompiledAction, target: ChangeTarget): ByStatus[] {
    const buckets: ByStatus[] = [];
    if (target === "instance") {
      buckets.push(w.anyStep);
      for (const [kind, b] of w.instance) if (kind !== action.kind) buckets.push(b);
    } else {
      const same = w.steps.get(target.step);
      if (same) buckets.push(same);
      for (const b of w.instance.values()) buckets.push(b);
    }
    return buckets;
  }

  /**
   * The earliest action added before that `action` (of a rule with `scope`) may meet, how many it may meet, and
   * where they meet (for the warning).
   */
  meets(
    scope: Scope,
    status: string,
    action: CompiledAction,
  ): { first: Entry; count: number; where: string } | undefined {
    const target = targetOf(action);
    if (target === undefined) return undefined;
    const indexes: WorkflowIndex[] = scope.star
      ? [this.all]
      : [
          ...scope.workflows.flatMap((w) => {
            const i = this.workflows.get(refKey(w));
            return i ? [i] : [];
          }),
          this.star,
        ];
    let first: { entry: Entry; index: WorkflowIndex } | undefined;
    let count = 0;
    // an entry of a rule over several workflows is in several of these indexes: counted once
    const several = new Set<Entry>();
    for (const index of indexes) {
      for (const bucket of ConflictIndex.buckets(index, action, target)) {
        for (const [key, group] of bucket) {
          this.comparisons++;
          if (!mayMeet(key, status)) continue;
          count += group.count - group.several.length;
          for (const e of group.several) several.add(e);
          if (!first || group.first.order < first.entry.order) first = { entry: group.first, index };
        }
      }
    }
    if (!first) return undefined;
    // where: the workflow of the index it was found in; else (an index of "*" rules, or of all) the narrower rule's
    const where = first.index.label ?? scopeLabel(scope.star ? first.entry.scope : scope);
    return { first: first.entry, count: count + several.size, where };
  }

  add(scope: Scope, status: string, rule: CompiledRule, action: CompiledAction): void {
    const target = targetOf(action);
    if (target === undefined) return;
    const entry: Entry = { rule, action, order: this.added++, scope };
    const isSeveral = !scope.star && scope.workflows.length > 1;
    const into = (bucket: ByStatus): void => {
      const g = bucket.get(status);
      if (g) {
        g.count++;
        if (isSeveral) g.several.push(entry);
      } else bucket.set(status, { first: entry, count: 1, several: isSeveral ? [entry] : [] });
    };
    const indexes = scope.star ? [this.star, this.all] : [...scope.workflows.map((w) => this.workflow(w)), this.all];
    for (const w of indexes) {
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
  const one: Scope = { star: false, workflows: [{ name: "" }] };
  for (const r of rules) {
    const scope = scopeOf(r);
    const status = statusKey(r);
    // within one rule: two actions on the same step, or an abort next to a step action
    const within = new ConflictIndex();
    for (const b of r.actions) {
      const met = within.meets(one, "*", b);
      const why = met ? clash(met.first.action, b) : undefined;
      if (met && why) out.push(warn(b.pos, r.name, "conflict", `two actions of rule "${r.name}" may conflict: ${why}${andMore(met.count)}`));
      within.add(one, "*", r, b);
    }
    comparisons += within.comparisons;
    for (const b of r.actions) {
      const met = across.meets(scope, status, b);
      const why = met ? clash(met.first.action, b) : undefined;
      if (!met || !why) continue;
      const q = met.first.rule;
      out.push(
        warn(
          b.pos,
          r.name,
          "conflict",
          `rules "${q.name}" (${at(met.first.action.pos)}) and "${r.name}" may conflict on ${met.where}: ${why}${andMore(met.count)}; an ` +
            "instance matched by both is reported as a conflict at plan time",
        ),
      );
    }
    // added after its own actions were checked: a rule's actions meet each other in the check above
    for (const b of r.actions) across.add(scope, status, r, b);
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
