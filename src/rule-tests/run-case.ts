/**
 * One test case: fixtures → InstanceData per rule, the rule's `select` checked client-side on each (as the server
 * would filter), then the pure planner (planFromInstances) on what is selected — no network, no sandbox — and the
 * expectations compared with the plan and with the per-instance explanations.
 */
import { planBindings } from "../engine/context.js";
import { explainRule, type RuleExplanation } from "../engine/explain/index.js";
import type { InstanceData } from "../actions/instance.js";
import { planFromInstances, type PureRuleInput } from "../engine/plan-offline.js";
import { resolveDateTime } from "../rules/datetime.js";
import { posOfKey, posOfValue, type SourceFile } from "../rules/positions.js";
import { didYouMean } from "../text/suggest.js";
import type { CompiledRule, FieldRef, RuleSet, WorkflowRef } from "../rules/types.js";
import { compareChanges } from "./compare-changes.js";
import { compareErrors } from "./compare-errors.js";
import { compareIds } from "./compare-ids.js";
import { compareReports } from "./compare-reports.js";
import { buildInstance } from "./fixtures.js";
import type { Observed } from "./observed.js";
import type { FieldTypeName, Fixture, TestFileData } from "./schema.js";
import type { CaseResult, Failure } from "./types.js";

export interface CaseInput {
  src: SourceFile;
  data: TestFileData;
  index: number;
  ruleSet: RuleSet;
  /** form-field types by workflow id and `step:action`, from the workflow catalog; the file's `field_types` win */
  catalogTypes?: ReadonlyMap<number, Readonly<Record<string, FieldTypeName>>>;
}

type Path = Array<string | number>;

interface Located<T> {
  value: T;
  path: Path;
}

/** Shared fixtures first, then the case's own; a case fixture replaces a shared one with the same id. */
function fixturesOf(
  data: TestFileData,
  index: number,
): { list: Array<Located<Fixture>>; problems: Array<{ path: Path; message: string }> } {
  const problems: Array<{ path: Path; message: string }> = [];
  const byId = new Map<number, Located<Fixture>>();
  const add = (list: Fixture[] | undefined, base: Path): void => {
    const seen = new Set<number>();
    (list ?? []).forEach((f, k) => {
      if (seen.has(f.id))
        problems.push({ path: [...base, k, "id"], message: `fixture id ${f.id} appears twice in this list` });
      seen.add(f.id);
      byId.set(f.id, { value: f, path: [...base, k] });
    });
  };
  add(data.instances, ["instances"]);
  add(data.tests[index]?.instances, ["tests", index, "instances"]);
  return { list: [...byId.values()], problems };
}

function aliasMap(rules: readonly CompiledRule[]): Map<string, FieldRef | null> {
  const out = new Map<string, FieldRef | null>();
  for (const r of rules) {
    for (const [alias, ref] of Object.entries(r.fields)) {
      const prev = out.get(alias);
      if (prev === undefined) out.set(alias, ref);
      else if (prev && (prev.step !== ref.step || prev.action !== ref.action)) out.set(alias, null);
    }
  }
  return out;
}

/** A workflow a rule is tested in: its id (0 for a name the file does not map) and the names that mean it. */
interface Target {
  id: number;
  names: string[];
}

function targetOf(ref: WorkflowRef, data: TestFileData): Target {
  if ("id" in ref) return { id: ref.id, names: [] };
  return { id: data.workflows?.[ref.name] ?? 0, names: [ref.name] };
}

/** A fixture's `workflow` or a key of its `fields_by_workflow`: an id (number or digits) or a name. */
function means(key: string | number, t: Target, data: TestFileData): boolean {
  if (typeof key === "number" || /^\d+$/.test(key)) return Number(key) === t.id;
  if (t.names.includes(key)) return true;
  const id = data.workflows?.[key];
  return id !== undefined && id === t.id;
}

/**
 * The workflows a rule is tested in: its own, each of a list, or for "*" every workflow the file names (in
 * `workflows`, a fixture's `workflow` or `fields_by_workflow`).
 */
function targetsOf(rule: CompiledRule, data: TestFileData, fixtures: ReadonlyArray<Located<Fixture>>): Target[] {
  if (rule.workflows === undefined) return [targetOf(rule.workflow, data)];
  const out: Target[] = [];
  const add = (t: Target): void => {
    const same = out.find((o) => o.id === t.id && (t.id !== 0 || o.names.join() === t.names.join()));
    if (same) same.names.push(...t.names.filter((n) => !same.names.includes(n)));
    else out.push(t);
  };
  if (rule.workflows !== "*") {
    for (const ref of rule.workflows) add(targetOf(ref, data));
    return out;
  }
  for (const [name, id] of Object.entries(data.workflows ?? {})) add({ id, names: [name] });
  const keyed = (k: string | number): void => {
    if (typeof k === "number" || /^\d+$/.test(k)) add({ id: Number(k), names: [] });
  };
  for (const f of fixtures) {
    if (f.value.workflow !== undefined) keyed(f.value.workflow);
    Object.keys(f.value.fields_by_workflow ?? {}).forEach(keyed);
  }
  // no workflow named anywhere: the fixtures without `workflow` still make one
  return out.length > 0 ? out.sort((a, b) => a.id - b.id) : [{ id: 0, names: [] }];
}

/**
 * The workflow a fixture is in for a rule: its `workflow` (none of the rule's: not in the case), else the first of
 * the rule's workflows its `fields_by_workflow` gives values for, else the rule's first.
 */
function fixtureTarget(f: Fixture, targets: Target[], data: TestFileData): Target | undefined {
  const workflow = f.workflow;
  if (workflow !== undefined) return targets.find((t) => means(workflow, t, data));
  const keys = Object.keys(f.fields_by_workflow ?? {});
  return targets.find((t) => keys.some((k) => means(k, t, data))) ?? targets[0];
}

/**
 * Aliases a fixture in workflow `t` may use: those of the rules under test in it, then those of the other loaded
 * rules of that workflow (shared fixtures are written once for all the rules of a file).
 */
function aliasesIn(
  t: Target,
  rules: CompiledRule[],
  ruleSet: RuleSet,
  data: TestFileData,
): Map<string, FieldRef | null> {
  const single = (r: CompiledRule): boolean => {
    if (r.workflows !== undefined) return false;
    const own = targetOf(r.workflow, data);
    return own.id === t.id && (t.id !== 0 || own.names.some((n) => t.names.includes(n)));
  };
  // a rule under test over several workflows names its fields by name, resolved per workflow: its aliases hold in each
  const own = aliasMap(rules.filter((r) => r.workflows !== undefined || single(r)));
  const others = aliasMap(ruleSet.rules.filter((r) => !rules.includes(r) && single(r)));
  for (const [alias, ref] of others) if (!own.has(alias)) own.set(alias, ref);
  return own;
}

export async function runCase(input: CaseInput): Promise<CaseResult> {
  const started = performance.now();
  const { src, data, index, ruleSet } = input;
  const tc = data.tests[index];
  const pos = posOfValue(src, ["tests", index]);
  const names = tc ? (Array.isArray(tc.rule) ? tc.rule : [tc.rule]) : [];
  const result: CaseResult = {
    pos,
    rules: names,
    name: tc?.name ?? `tests[${index}]`,
    status: "pass",
    failures: [],
    durationMs: 0,
  };
  if (!tc) return result;
  const problem = (path: Path, message: string): Failure => ({ subject: message, at: posOfValue(src, path) });
  const finish = (): CaseResult => {
    result.durationMs = performance.now() - started;
    if (result.failures.length > 0 && result.status === "pass") result.status = "fail";
    return result;
  };

  const all = ruleSet.rules.map((r) => r.name);
  const rules: CompiledRule[] = [];
  names.forEach((n, k) => {
    const r = ruleSet.rules.find((x) => x.name === n);
    if (r) rules.push(r);
    else
      result.failures.push(
        problem(
          Array.isArray(tc.rule) ? ["tests", index, "rule", k] : ["tests", index, "rule"],
          `no loaded rule is named "${n}"${didYouMean(n, all)}`,
        ),
      );
  });
  const fileNow = new Date(data.now);
  const now = tc.now ? new Date(resolveDateTime(tc.now, fileNow)) : fileNow;
  if (Object.keys(tc.expect).length === 0) {
    result.failures.push(
      problem(
        ["tests", index, "expect"],
        "expect lists nothing to check: give matched, selected, changes, reports or errors",
      ),
    );
  }
  const fixtures = fixturesOf(data, index);
  for (const p of fixtures.problems) result.failures.push(problem(p.path, p.message));
  // a misspelt workflow under fields_by_workflow would silently leave the fixture out of every case
  const known = new Set(
    [
      ...Object.keys(data.workflows ?? {}),
      ...ruleSet.rules.flatMap((r) => [r.workflow, ...(Array.isArray(r.workflows) ? r.workflows : [])]),
    ].flatMap((w) => (typeof w === "string" ? [w] : "name" in w ? [w.name] : [])),
  );
  for (const f of fixtures.list) {
    for (const key of Object.keys(f.value.fields_by_workflow ?? {})) {
      if (/^\d+$/.test(key) || known.has(key)) continue;
      const names = [...known].filter((n) => n !== "*");
      result.failures.push({
        subject: `unknown workflow "${key}" in fields_by_workflow: write its id, or map its name under workflows:${didYouMean(key, names)}`,
        at: posOfKey(src, [...f.path, "fields_by_workflow"].map(String), key),
      });
    }
  }
  if (result.failures.length > 0) {
    result.status = "error";
    return finish();
  }

  const bindings = planBindings(now);
  const obs: Observed = { rules, explanations: new Map(), names: new Map(), plan: await planFromInstances([], now) };
  const inputs: PureRuleInput[] = [];
  const reported = new Set<string>();
  for (const rule of rules) {
    const targets = targetsOf(rule, data, fixtures.list);
    const explained = new Map<number, RuleExplanation>();
    const selected: InstanceData[] = [];
    for (const f of fixtures.list) {
      obs.names.set(f.value.id, f.value.name ?? `Instance ${f.value.id}`);
      const t = fixtureTarget(f.value, targets, data);
      if (!t) continue;
      const workflowId = t.id;
      const aliases = aliasesIn(t, rules, ruleSet, data);
      // the catalog's types of this workflow's fields, under the file's own field_types
      const fieldTypes = { ...(input.catalogTypes?.get(workflowId) ?? {}), ...(data.field_types ?? {}) };
      const workflowKey = Object.keys(f.value.fields_by_workflow ?? {}).find((k) => means(k, t, data));
      const shared = f.path[0] === "instances" && f.value.workflow === undefined;
      // a shared fixture with values for other workflows only belongs to the rules of those workflows
      if (shared && f.value.fields_by_workflow !== undefined && workflowKey === undefined && !f.value.fields) continue;
      // a shared fixture whose field aliases are all another workflow's belongs to the rules that declare them
      const own = [
        ...Object.keys(f.value.fields ?? {}),
        ...Object.keys(workflowKey !== undefined ? (f.value.fields_by_workflow?.[workflowKey] ?? {}) : {}),
      ];
      if (shared && own.length > 0 && own.every((a) => !aliases.has(a))) continue;
      const built = buildInstance(f.value, {
        now,
        aliases,
        fieldTypes,
        processId: workflowId,
        ...(workflowKey !== undefined ? { workflowKey } : {}),
      });
      for (const p of built.problems) {
        const seen = `${f.path.join("/")}:${p.message}`;
        if (reported.has(seen)) continue;
        reported.add(seen);
        const key = p.path.at(-1);
        const at = posOfKey(src, [...f.path, ...p.path.slice(0, -1)].map(String), String(key ?? ""));
        result.failures.push({ subject: p.message, at });
      }
      const e = await explainRule(rule, built.data, { now, workflowId, bindings });
      explained.set(f.value.id, e);
      // filters that cannot be checked on a fixture (lead_user, organization) are assumed to hold
      if (e.selected !== "fail") selected.push(built.data);
    }
    obs.explanations.set(rule.name, explained);
    const first = targets[0]?.id ?? 0;
    inputs.push({
      rule,
      workflowId: first,
      instances: selected,
      ...(rule.workflows !== undefined ? { workflowIds: targets.map((t) => t.id) } : {}),
    });
  }
  if (result.failures.length > 0) {
    result.status = "error";
    return finish();
  }
  obs.plan = await planFromInstances(inputs, now);

  const ex = tc.expect;
  const locate = (path: ReadonlyArray<string | number>) => posOfValue(src, ["tests", index, "expect", ...path]);
  if (ex.selected) result.failures.push(...compareIds("selected", ex.selected, obs, locate));
  if (ex.matched) result.failures.push(...compareIds("matched", ex.matched, obs, locate));
  if (ex.changes) {
    const notes: string[] = [];
    result.failures.push(...compareChanges(ex.changes, obs, locate, notes));
    if (notes.length > 0) result.notes = notes;
  }
  if (ex.reports) result.failures.push(...compareReports(ex.reports, obs, locate));
  result.failures.push(...compareErrors(ex.errors, obs));
  if (result.failures.some((f) => f.at)) result.status = "error";
  return finish();
}
