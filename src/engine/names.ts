/**
 * The plan's `names` table (docs/design.md, "Names in a plan"): what the service calls the workflows, steps and form
 * fields the plan shows, taken from what the run read anyway — the live structure (read for the structure checks),
 * the resolved workflow names, the records' process_snapshot, the committed workflow catalog — never from a request
 * of its own. Pure: sources in, the table out; the same sources always give the same table.
 */
import type { WorkflowStructure } from "../model/structure.js";
import { defined } from "../model/defined.js";
import { structureFromSnapshot } from "../model/structure.js";
import { valueKey } from "../plan/names.js";
import type { PlannedChange, WorkflowNames } from "../plan/types.js";
import type { FieldRef } from "../rules/types.js";

/** Names one source knows of one workflow. */
export interface NameSource {
  name?: string;
  steps: ReadonlyMap<number, string>;
  fields: ReadonlyMap<number, string>;
}

/**
 * A structure's names, without the stand-ins src/model/structure.ts writes where the snapshot has none (`step 12`,
 * `field 34`, `workflow 56`): a stand-in is no name, and the view then shows the id alone.
 */
export function namesOfStructure(s: WorkflowStructure): NameSource {
  const steps = new Map<number, string>();
  const fields = new Map<number, string>();
  for (const step of s.steps) {
    if (step.name !== "" && step.name !== `step ${step.id}`) steps.set(step.id, step.name);
    for (const a of step.actions) if (a.name !== "" && a.name !== `field ${a.id}`) fields.set(a.id, a.name);
  }
  const name = s.workflow.name !== "" && s.workflow.name !== `workflow ${s.workflow.id}` ? s.workflow.name : undefined;
  return { ...defined({ name }), steps, fields };
}

/** A record's process_snapshot as a name source (its `name`, its steps and their form fields). */
export function namesOfSnapshot(workflowId: number, snapshot: unknown): NameSource {
  const name =
    typeof snapshot === "object" && snapshot !== null && typeof (snapshot as { name?: unknown }).name === "string"
      ? (snapshot as { name: string }).name
      : "";
  return namesOfStructure(structureFromSnapshot({ id: workflowId, name, folder: null }, null, snapshot));
}

/** What the table is built for: the plan's changes and, per rule, its workflow and field aliases. */
export interface NamedRule {
  name: string;
  workflowId: number | null;
  fields: Record<string, FieldRef>;
}

/**
 * What the names read of a change: its rule, workflow, step and the keys of before and after (in that order). The
 * planner keeps one per kind of change, not one per change (src/engine/change-store.ts).
 */
export interface NameFact {
  rule: string;
  process_id: number;
  step_id?: number;
  keys: readonly string[];
}

/** A change's name fact. */
export function nameFact(c: PlannedChange): NameFact {
  return {
    rule: c.rule,
    process_id: c.process_id,
    ...(c.step_id !== undefined ? { step_id: c.step_id } : {}),
    keys: [...Object.keys(c.before), ...Object.keys(c.after)],
  };
}

/** The aliases a rule's changes show (`fields.<alias>` keys), with the ids they stand for (never a name's stand-in key). */
export function aliasesShown(rule: NamedRule, changes: readonly PlannedChange[]): Record<string, FieldRef> | undefined {
  return aliasesOf(rule, changes.map(nameFact));
}

/** aliasesShown from the changes' name facts, in plan order (the first change showing an alias places it). */
export function aliasesOf(rule: NamedRule, facts: Iterable<NameFact>): Record<string, FieldRef> | undefined {
  const out: Record<string, FieldRef> = {};
  for (const c of facts) {
    if (c.rule !== rule.name) continue;
    for (const key of c.keys) {
      const k = valueKey(key);
      if (!k || !("alias" in k) || Object.hasOwn(out, k.alias) || !Object.hasOwn(rule.fields, k.alias)) continue;
      const ref = rule.fields[k.alias];
      if (ref && ref.step >= 0 && ref.action >= 0) out[k.alias] = { step: ref.step, action: ref.action };
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Steps and fields a view shows besides the changes' (`explain`: the active steps, the fields read). */
export interface AlsoShown {
  workflowId: number;
  steps: readonly number[];
  fields: readonly number[];
}

/**
 * The table: per workflow of a rule or a change, its name and the names of the steps and fields the changes show
 * (each from the first source, in the order given, that knows it). A workflow nothing names is left out.
 */
export function namesTable(
  rules: readonly NamedRule[],
  changes: readonly PlannedChange[],
  sources: ReadonlyMap<number, readonly NameSource[]>,
  also: readonly AlsoShown[] = [],
): WorkflowNames[] {
  return namesTableOf(rules, changes.map(nameFact), sources, also);
}

/** namesTable from the changes' name facts (any order: the table is sorted). */
export function namesTableOf(
  rules: readonly NamedRule[],
  facts: Iterable<NameFact>,
  sources: ReadonlyMap<number, readonly NameSource[]>,
  also: readonly AlsoShown[] = [],
): WorkflowNames[] {
  const wanted = new Map<number, { steps: Set<number>; fields: Set<number> }>();
  const want = (wf: number): { steps: Set<number>; fields: Set<number> } => {
    let w = wanted.get(wf);
    if (!w) wanted.set(wf, (w = { steps: new Set(), fields: new Set() }));
    return w;
  };
  const ruleOf = new Map(rules.map((r) => [r.name, r]));
  for (const r of rules) if (r.workflowId !== null) want(r.workflowId);
  for (const a of also) {
    const w = want(a.workflowId);
    for (const s of a.steps) w.steps.add(s);
    for (const f of a.fields) w.fields.add(f);
  }
  for (const c of facts) {
    const w = want(c.process_id);
    if (c.step_id !== undefined) w.steps.add(c.step_id);
    for (const key of c.keys) {
      const k = valueKey(key);
      if (!k) continue;
      if ("step" in k) w.steps.add(k.step);
      else if ("field" in k) w.fields.add(k.field);
      else {
        const ref = ruleOf.get(c.rule)?.fields[k.alias];
        if (ref && ref.action >= 0) w.fields.add(ref.action);
      }
    }
  }
  const out: WorkflowNames[] = [];
  for (const wf of [...wanted.keys()].sort((a, b) => a - b)) {
    const list = sources.get(wf) ?? [];
    const w = wanted.get(wf) ?? { steps: new Set<number>(), fields: new Set<number>() };
    const name = list.find((s) => s.name !== undefined)?.name;
    const pick = (
      ids: Set<number>,
      of: (s: NameSource) => ReadonlyMap<number, string>,
    ): Record<string, string> | undefined => {
      const named: Record<string, string> = {};
      for (const id of [...ids].sort((a, b) => a - b)) {
        const found = list
          .map(of)
          .find((m) => m.has(id))
          ?.get(id);
        if (found !== undefined) named[String(id)] = found;
      }
      return Object.keys(named).length > 0 ? named : undefined;
    };
    const steps = pick(w.steps, (s) => s.steps);
    const fields = pick(w.fields, (s) => s.fields);
    if (name === undefined && !steps && !fields) continue;
    out.push({
      workflow_id: wf,
      ...defined({ name, steps, fields }),
    });
  }
  return out;
}

/** Two tables as one (`plan --compare`: the working tree's plan shows the ref's changes too); the first wins per id. */
export function mergeNames(
  a: readonly WorkflowNames[] | undefined,
  b: readonly WorkflowNames[] | undefined,
): WorkflowNames[] | undefined {
  if (!b || b.length === 0) return a ? [...a] : undefined;
  if (!a || a.length === 0) return [...b];
  const byId = new Map<number, WorkflowNames>();
  for (const w of [...b, ...a]) {
    const was = byId.get(w.workflow_id);
    const steps = { ...was?.steps, ...w.steps };
    const fields = { ...was?.fields, ...w.fields };
    const name = w.name ?? was?.name;
    byId.set(w.workflow_id, {
      workflow_id: w.workflow_id,
      ...(name !== undefined ? { name } : {}),
      ...(Object.keys(steps).length > 0 ? { steps } : {}),
      ...(Object.keys(fields).length > 0 ? { fields } : {}),
    });
  }
  return [...byId.values()].sort((x, y) => x.workflow_id - y.workflow_id);
}

/** Where the plan's names come from, per workflow, best first: the live structure, a record's snapshot, the catalog. */
export function nameSources(
  read: ReadonlyMap<number, WorkflowStructure>,
  snapshots: ReadonlyMap<number, { snapshot: unknown }>,
  catalog: readonly WorkflowStructure[] = [],
): Map<number, NameSource[]> {
  const out = new Map<number, NameSource[]>();
  const add = (id: number, source: NameSource): void => void out.set(id, [...(out.get(id) ?? []), source]);
  for (const [id, s] of read) add(id, namesOfStructure(s));
  for (const [id, s] of snapshots) add(id, namesOfSnapshot(id, s.snapshot));
  for (const s of catalog) add(s.workflow.id, namesOfStructure(s));
  return out;
}
