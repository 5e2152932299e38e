/**
 * A partial plan (`plan --max-duration … --partial`, docs/operating.md "A partial plan"): the rules that finished
 * before the deadline as planned, and the rules it cut planned again from what the state holds (src/state/held.ts:
 * this run's checkpoints, and a steady run's previous state where this run's changes listings show it still holds),
 * never from the service. Each cut rule is judged on its own (./partial-rules.ts): complete when its own selection
 * was held whole, partial (named, with how many instances of how many it covers) when planned over part of it, and
 * cut (no changes, no report, the reason in words) when the state could not answer it, or when it has a limit, which
 * only the whole selection can judge.
 */
import type { ApiClient } from "../api/index.js";
import { runPlan, type RunPlanOptions } from "../engine/plan-live.js";
import { resolveConflicts } from "../engine/conflicts.js";
import { MUTATING_KINDS } from "../actions/index.js";
import type { Plan, PlanError, PlannedChange } from "../plan/types.js";
import type { CompiledRule, RuleSet } from "../rules/types.js";
import {
  HeldClient,
  HeldMemo,
  lacking,
  type HeldAnswers,
  type HeldSources,
  type RunState,
  type Served,
  type SyncProgress,
} from "../state/index.js";
import {
  besideKeys,
  changedOnly,
  changingKeys,
  notWhole,
  readsByListing,
  ruleCover,
  selectionFromOlder,
  selectionKeys,
} from "./partial-rules.js";

/**
 * The plan of a run cut by --max-duration with --partial, as far as it got: the rules the deadline cut (their api
 * errors) leave the errors and are named in `partial`, with how far the sync got; everything else is the plan as made.
 */
export function asPartial<P extends Plan>(plan: P, sync: SyncProgress | undefined, cut: string[]): P {
  const cutSet = new Set(cut);
  const kept = plan.errors.filter((e) => !(e.code === "api" && e.rule !== undefined && cutSet.has(e.rule)));
  const { format_version, flowrules_version, created_at, ...rest } = plan;
  return {
    format_version,
    flowrules_version,
    created_at,
    partial: {
      synced: sync?.synced ?? null,
      total: sync?.total ?? null,
      workflows: sync?.perWorkflow ?? [],
      rules_cut: [...cutSet],
    },
    ...rest,
    errors: kept,
    summary: { ...plan.summary, errors: kept.length },
  } as P;
}

export interface PartialInputs {
  /** the plan as the deadline left it */
  plan: Plan;
  sync: SyncProgress | undefined;
  /** the rules the deadline cut */
  cut: string[];
  ruleSet: RuleSet;
  state: RunState | undefined;
  /** what the live run answered that the state does not keep */
  memo: HeldMemo | undefined;
  live: ApiClient;
  /** the run's now: the state's answers are as of it */
  now: Date | undefined;
  run: Pick<RunPlanOptions, "optOutTag" | "shard" | "catalog">;
}

/**
 * At most this many passes: each leaves out the instances whose data the rules asked for is not all held, and asks
 * whole the lists read beside a selection that were held in part.
 */
const PASSES = 6;

type RulesPartial = NonNullable<NonNullable<Plan["partial"]>["rules_partial"]>;

/** The partial plan, with the cut rules planned from the state where that is sound. */
export async function partialPlan(i: PartialInputs): Promise<Plan> {
  const base = asPartial(i.plan, i.sync, i.cut);
  if (!i.state || !i.memo || !i.now || i.cut.length === 0) return base;
  // this run's checkpoints, and the previous complete state where this run listed what changed since
  const state = i.state;
  const index = await state.reopen();
  const older = state.older();
  if (!index && !older) return withReasons(base, new Map(i.cut.map((r) => [r, NOTHING])));
  const nowIso = i.now.toISOString();
  const sources: HeldSources = {
    current: index,
    // answers as of this run only: a workflow whose bookmark is an older run's holds answers carried from its look
    usable: (pid) => state.used(pid) && index?.marks[String(pid)]?.run_at === nowIso,
    older,
  };
  try {
    return await fromState(i, base, sources, i.memo, i.now);
  } catch (err) {
    // the state could not answer: the cut rules stay cut, as without it
    const why = `the state could not answer (${err instanceof Error ? err.message : String(err)})`;
    return withReasons(base, new Map(i.cut.map((r) => [r, why])));
  } finally {
    await index?.close();
  }
}

const NOTHING =
  "the state holds nothing of this run: no checkpoint was written and no complete previous state was used";

function withReasons(plan: Plan, why: ReadonlyMap<string, string>): Plan {
  const p = plan.partial;
  if (!p || p.rules_cut.length === 0) return plan;
  const reasons = p.rules_cut.map((rule) => ({ rule, reason: why.get(rule) ?? "the state could not answer it" }));
  return { ...plan, partial: { ...p, cut_reasons: reasons } };
}

async function fromState(i: PartialInputs, base: Plan, sources: HeldSources, memo: HeldMemo, now: Date): Promise<Plan> {
  const cutSet = new Set(i.cut);
  const ruleSet: RuleSet = { ...i.ruleSet, rules: i.ruleSet.rules.filter((r) => cutSet.has(r.name)) };
  // per question, the instances whose data its rules read is not all held; those of the lists of rules that change
  // instances are left out of all of them alike, so two rules clashing on one instance still show as a conflict
  const need = new Map<string, Set<number>>();
  const drops = new Map<string, Set<number>>();
  const whole = new Set<string>();
  // what each question is answered from does not change between passes: found once
  const found: HeldAnswers = new Map();
  let client: HeldClient;
  let held: Plan;
  const workflowsOf = (name: string): number[] => {
    const entry = held.rules.find((r) => r.name === name);
    return !entry ? [] : entry.workflow_id !== null ? [entry.workflow_id] : (entry.workflow_ids ?? []);
  };
  const rulesOf = (): Array<{ rule: CompiledRule; workflows: number[] }> =>
    ruleSet.rules.map((rule) => ({ rule, workflows: workflowsOf(rule.name) }));
  // the questions of the rules' own selections: the only lists that may be held in part
  const selections = (): Set<string> =>
    new Set(ruleSet.rules.flatMap((r) => selectionKeys(r, workflowsOf(r.name), now)));
  // a list read beside a selection that lacks only what changed since the previous state (as that state's listings
  // of the selections do): judged per rule below, not asked whole
  const besides = (): Set<string> =>
    new Set(ruleSet.rules.flatMap((r) => besideKeys(r, workflowsOf(r.name), now, i.run.optOutTag)));
  const lacksChanged = (key: string, s: Served, beside: Set<string>): boolean => beside.has(key) && changedOnly(s);
  for (let pass = 1; ; pass++) {
    client = new HeldClient(i.live, sources, memo, drops, whole, found);
    held = await runPlan({ client, ruleSet, now, ...i.run });
    if (pass === PASSES) break;
    let again = false;
    const own = selections();
    const beside = besides();
    for (const [key, s] of client.served)
      if (s.part && !own.has(key) && !whole.has(key) && !lacksChanged(key, s, beside)) {
        whole.add(key);
        again = true;
      }
    if (client.missed) {
      const before = [...need.values()].reduce((n, s) => n + s.size, 0);
      await lacking(client, need, readsByListing(client, rulesOf(), now));
      if ([...need.values()].reduce((n, s) => n + s.size, 0) > before) again = true;
      const changing = changingKeys(client, rulesOf(), now);
      const shared = new Set([...changing].flatMap((k) => [...(need.get(k) ?? [])]));
      drops.clear();
      for (const [key, ids] of need) drops.set(key, changing.has(key) ? new Set([...ids, ...shared]) : ids);
      for (const key of changing) if (!drops.has(key)) drops.set(key, shared);
    }
    if (!again) break;
  }
  const own = selections();
  const beside = besides();
  // a list read beside a selection still held in part after the last pass: its workflow's rules are not judged
  const unsure = new Set<number>();
  for (const [key, s] of client.served)
    if (s.part && !own.has(key) && !lacksChanged(key, s, beside)) unsure.add(s.processId);
  const failed = new Map(
    // a structure the state could not answer is a read that failed too: the rule is not planned from it
    held.errors.flatMap((e) =>
      (e.code === "api" || e.code === "structure") && e.rule ? [[e.rule, e.message] as const] : [],
    ),
  );
  const rulesPartial: RulesPartial = [];
  const stillCut = new Map<string, string>();
  for (const name of i.cut) {
    const entry = held.rules.find((r) => r.name === name);
    const rule = ruleSet.rules.find((r) => r.name === name);
    if (!entry || !rule) {
      stillCut.set(name, "the state could not answer it");
      continue;
    }
    const why = failed.get(name);
    const workflows = workflowsOf(name);
    if (why !== undefined) {
      let what = why.replace(/^rule "[^"]*": /, "");
      // its own selection was held: the list not held is one it reads beside it
      const selected = selectionKeys(rule, workflows, now);
      if (selected.length > 0 && selected.every((k) => client.served.has(k) || client.emptied.has(k)))
        what = what.replace(/^a selection of workflow (\d+)/, "a list of workflow $1 it reads beside its selection");
      stillCut.set(name, `the state does not hold what it reads: ${what}`);
      continue;
    }
    if (workflows.some((w) => unsure.has(w))) {
      stillCut.set(name, "a list of its workflow read beside a selection is held only in part");
      continue;
    }
    // lacking only what changed is whole for a selection answered from the previous state: it lacks the same
    const older = selectionFromOlder(client, rule, workflows, now);
    const besideHeld = besideKeys(rule, workflows, now, i.run.optOutTag).find((k) => {
      const s = client.served.get(k);
      return s !== undefined && notWhole(s) && !(older && changedOnly(s));
    });
    if (besideHeld !== undefined) {
      stillCut.set(name, "its excluded instances, its steps' activity or its priority lists are held only in part");
      continue;
    }
    const { whole: all, total: counted } = await ruleCover(client, rule, workflows, now);
    // its selection held whole, or all the service counted of it planned: complete, named nowhere
    if (all || (counted !== null && entry.selected >= counted)) continue;
    const total = counted === null ? null : Math.max(counted, entry.selected);
    // a limit is judged over the whole selection: over part of it, only a selection the service counted within it
    // (or a part already over max_instances, which the whole would be too) is judged as the whole would be
    const bound = Math.min(rule.limits.max_instances ?? Infinity, rule.limits.max_changes_per_run ?? Infinity);
    const over = held.errors.some((e) => e.rule === name && e.code === "limit");
    if (bound !== Infinity && !over && (total === null || total > bound)) {
      stillCut.set(
        name,
        total === null
          ? "it has a limit, and how many instances its selection has is not known"
          : `it has a limit, and its selection of ${total} instances is over it`,
      );
      continue;
    }
    rulesPartial.push({ rule: name, selected: entry.selected, total });
  }
  const planned = (rule: string): boolean => cutSet.has(rule) && !stillCut.has(rule);
  return withReasons(merged(base, held, planned, new Set(stillCut.keys()), rulesPartial), stillCut);
}

/** The plan as made, with the rules planned from the state added; a clash with another rule's change is a conflict. */
function merged(
  base: Plan,
  held: Plan,
  planned: (rule: string) => boolean,
  stillCut: Set<string>,
  rulesPartial: RulesPartial,
): Plan {
  const added = held.changes.filter((c) => planned(c.rule));
  const all = [...base.changes, ...added];
  // conflicts between the rules planned from the state and the others, judged as a complete plan judges them
  const touched = new Set(added.map((c) => c.instance_id));
  const resolved = resolveConflicts(all.filter((c) => c.audit !== true && touched.has(c.instance_id)));
  const kept = new Set<PlannedChange>(resolved.changes);
  const changes = all.filter((c) => c.audit === true || !touched.has(c.instance_id) || kept.has(c));
  const known = new Set(base.errors.map((e) => JSON.stringify(e)));
  const conflictErrors = resolved.errors.filter((e) => !known.has(JSON.stringify(e)));
  const heldErrors = held.errors.filter((e) => planned(e.rule ?? "") && e.code !== "api" && e.code !== "structure");
  const errors: PlanError[] = [...base.errors, ...heldErrors, ...conflictErrors];
  const count = (rule: string): number => changes.filter((c) => c.rule === rule).length;
  const dropped = all.length - changes.length;
  const rules = base.rules.map((r) => {
    const fromState = planned(r.name) ? held.rules.find((h) => h.name === r.name) : undefined;
    const entry = fromState ?? r;
    return dropped > 0 ? { ...entry, changes: Math.min(entry.changes, count(r.name)) } : entry;
  });
  const reports = [...base.reports.filter((r) => !planned(r.rule)), ...held.reports.filter((r) => planned(r.rule))];
  const byKind: Record<string, number> = {};
  for (const k of MUTATING_KINDS) byKind[k] = changes.filter((c) => c.kind === k).length;
  const skipped = rules.reduce((n, r) => n + r.skipped, 0);
  // names of workflows only the rules planned from the state show
  const named = new Set((base.names ?? []).map((n) => n.workflow_id));
  const names = [...(base.names ?? []), ...(held.names ?? []).filter((n) => !named.has(n.workflow_id))];
  const partial = base.partial ?? { synced: null, total: null, workflows: [], rules_cut: [] };
  return {
    ...base,
    partial: {
      ...partial,
      rules_cut: partial.rules_cut.filter((r) => stillCut.has(r)),
      ...(rulesPartial.length > 0 ? { rules_partial: rulesPartial } : {}),
    },
    rules,
    changes,
    reports,
    errors,
    summary: {
      ...base.summary,
      ...byKind,
      reports: reports.length,
      errors: errors.length,
      ...(skipped > 0 ? { skipped } : {}),
    },
    ...(names.length > 0 ? { names } : {}),
  };
}
