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
import type { CompiledRule, FieldRef, RuleSet } from "../rules/types.js";
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

function ruleWorkflowId(rule: CompiledRule, data: TestFileData): number {
  return "id" in rule.workflow ? rule.workflow.id : (data.workflows?.[rule.workflow.name] ?? 0);
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

/**
 * Aliases a fixture may use: those of the rules under test, then those of the other loaded rules of the same
 * workflows (shared fixtures are written once for all the rules of a file).
 */
function aliasesOf(rules: CompiledRule[], ruleSet: RuleSet, data: TestFileData): Map<string, FieldRef | null> {
  const own = aliasMap(rules);
  const ids = new Set(rules.map((r) => ruleWorkflowId(r, data)));
  const others = aliasMap(ruleSet.rules.filter((r) => !rules.includes(r) && ids.has(ruleWorkflowId(r, data))));
  for (const [alias, ref] of others) if (!own.has(alias)) own.set(alias, ref);
  return own;
}

/** Whether a fixture belongs to a rule's workflow: no `workflow` means "the rule's", else by id or by name. */
function inWorkflow(f: Fixture, rule: CompiledRule, data: TestFileData): boolean {
  if (f.workflow === undefined) return true;
  const id = typeof f.workflow === "number" ? f.workflow : data.workflows?.[f.workflow];
  if (id !== undefined) return id === ruleWorkflowId(rule, data);
  return "name" in rule.workflow && rule.workflow.name === f.workflow;
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
  if (result.failures.length > 0) {
    result.status = "error";
    return finish();
  }

  const bindings = planBindings(now);
  const aliases = aliasesOf(rules, ruleSet, data);
  const obs: Observed = { rules, explanations: new Map(), names: new Map(), plan: await planFromInstances([], now) };
  const inputs: PureRuleInput[] = [];
  const reported = new Set<string>();
  for (const rule of rules) {
    const workflowId = ruleWorkflowId(rule, data);
    // the catalog's types of this workflow's fields, under the file's own field_types
    const fieldTypes = { ...(input.catalogTypes?.get(workflowId) ?? {}), ...(data.field_types ?? {}) };
    const explained = new Map<number, RuleExplanation>();
    const selected: InstanceData[] = [];
    for (const f of fixtures.list) {
      obs.names.set(f.value.id, f.value.name ?? `Instance ${f.value.id}`);
      if (!inWorkflow(f.value, rule, data)) continue;
      // a shared fixture whose field aliases are all another workflow's belongs to the rules that declare them
      const own = Object.keys(f.value.fields ?? {});
      if (
        f.path[0] === "instances" &&
        f.value.workflow === undefined &&
        own.length > 0 &&
        own.every((a) => !aliases.has(a))
      )
        continue;
      const built = buildInstance(f.value, { now, aliases, fieldTypes, processId: workflowId });
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
    inputs.push({ rule, workflowId, instances: selected });
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
